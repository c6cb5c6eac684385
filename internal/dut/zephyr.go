package dut

import (
	"fmt"
	"math"
	"regexp"

	"github.com/wirebench/wirebench/internal/result"
)

// Zephyr's zperf shell (subsys/net/lib/zperf/zperf_shell.c). Its numbers
// come from print_number: "95.07 Mbps", "1000 Kbps", "10.45 s", "198 us";
// older builds print "Received packets: 84531" and "Rate: 95.07 Mbps"
// instead of the tab-aligned lower-case lines (Zephyr 3.6 on an MIMXRT1170-EVK).
var (
	zRate      = regexp.MustCompile(`(?i)^\s*rate:\s*([\d][\d., ]*?)\s*(Gbps|Mbps|Kbps|bps)\b`)
	zDuration  = regexp.MustCompile(`(?i)^\s*duration:\s*([\d][\d.,]*)\s*(us|ms|s|m)\b`)
	zJitter    = regexp.MustCompile(`(?i)^\s*jitter:?\s*([\d][\d.,]*)\s*(us|ms|s)\b`)
	zReceived  = regexp.MustCompile(`(?i)received packets:\s*([\d,]+)`)
	zLost      = regexp.MustCompile(`(?i)(?:nb|num) packets lost:\s*([\d,]+)`)
	zOutorder  = regexp.MustCompile(`(?i)(?:nb packets outorder|num packets out (?:of )?order):\s*([\d,]+)`)
	zSent      = regexp.MustCompile(`(?i)^\s*num packets:\s*([\d,]+)`)
	zReportTop = regexp.MustCompile(`(?i)end of session|session ended|upload completed`)
)

var zephyr = &Adapter{
	Name:    "zephyr",
	Prompt:  regexp.MustCompile(`uart:~\$\s*$`),
	Banner:  regexp.MustCompile(`\*\*\* Booting Zephyr OS`),
	Detect:  regexp.MustCompile(`(?i)\bzperf\b|Zephyr`),
	Failed:  regexp.MustCompile(`(?i)command not found|failed to start|upload failed|session error|unable to|invalid |not enough parameters|unrecognized|not supported|not enabled`),
	Started: regexp.MustCompile(`(?i)(UDP|TCP) server (already )?started`),
	Commands: func(role Role, t Test) ([]string, error) {
		if role == RoleServer {
			return []string{fmt.Sprintf("zperf %s download %d", t.Proto, t.port())}, nil
		}
		size := t.Length
		if size == 0 {
			size = 1024 // zperf's own default is 256 bytes; 1K is what its docs and the field reports use
		}
		if t.Proto == "tcp" {
			return []string{fmt.Sprintf("zperf tcp upload %s %d %d %d", t.Peer, t.port(), t.seconds(), size)}, nil
		}
		kbps := int64(math.Ceil(t.rate() / 1000))
		return []string{fmt.Sprintf("zperf udp upload %s %d %d %d %dK", t.Peer, t.port(), t.seconds(), size, kbps)}, nil
	},
	Done: func(role Role, t Test) func(string) bool {
		if role == RoleServer {
			return afterAll(zRate, zDuration)
		}
		return afterAll(zRate, zDuration, zSent)
	},
	Parse: func(role Role, t Test, lines []string) (result.Device, error) {
		d := result.Device{Raw: raw(lines, zReportTop)}
		if m := lastMatch(zRate, lines); m != nil {
			if v, ok := scaled(m[1], m[2]); ok {
				d.BitsPerSecond = f64(v)
			}
		}
		if m := lastMatch(zDuration, lines); m != nil {
			if v, ok := scaled(m[1], m[2]); ok {
				d.Seconds = f64(v / 1000)
			}
		}
		if t.Proto == "udp" {
			if m := lastMatch(zJitter, lines); m != nil {
				if v, ok := scaled(m[1], m[2]); ok {
					d.JitterMS = f64(v)
				}
			}
			count(&d.Lost, zLost, lines)
			count(&d.OutOfOrder, zOutorder, lines)
		}
		if role == RoleServer {
			count(&d.Packets, zReceived, lines)
		} else {
			count(&d.Packets, zSent, lines)
		}
		if d.BitsPerSecond == nil {
			return d, fmt.Errorf("zephyr: no rate in the zperf report")
		}
		return d, nil
	},
	Stop: func(role Role, t Test) []string {
		if role == RoleServer {
			return []string{fmt.Sprintf("zperf %s download stop", t.Proto)}
		}
		return nil
	},
}
