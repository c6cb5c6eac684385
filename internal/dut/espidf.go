package dut

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/wirebench/wirebench/internal/result"
)

// ESP-IDF's iperf (examples/wifi/iperf, and the espressif/iperf +
// iperf-cmd components). It prints only bandwidth: the component's
// "[  0]  0.0-10.0 sec\t11.92 MBytes\t10.00 Mbits/sec", the old example's
// "   0-  10 sec       9.98 Mbits/sec".
var espLine = regexp.MustCompile(`^\s*(?:\[\s*\d+\]\s*)?(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*sec[\s,]+(?:[\d.]+\s*[KMG]?Bytes\s+)?([\d.]+)\s*([KMG]?)bits/sec`)

var espExit = regexp.MustCompile(`(?i)iperf exit|iperf (stopped|aborted)|instance \d+ (stopped|closed)`)

// espSummary returns the line's span and rate when it is a whole-test
// line (from 0).
func espSummary(l string) (end, bps float64, ok bool) {
	m := espLine.FindStringSubmatch(l)
	if m == nil || m[1] != "0" && m[1] != "0.0" {
		return 0, 0, false
	}
	end, _ = strconv.ParseFloat(m[2], 64)
	bps, ok = scaled(m[3], m[4]+"bits/sec")
	return end, bps, ok
}

// espBits matches the iperf-cmd help of versions whose -b takes bit/s with
// a k/m/g suffix ("-b, --bandwidth=<bandwidth>  #[kmgKMG]  bandwidth to
// send at in bits/sec"); older ones, and the esp-idf example, take whole
// Mbit/s ("bandwidth to send at in Mbits/sec").
var espBits = regexp.MustCompile(`(?i)kmgKMG|bandwidth to send at in bits/sec`)

// espIDF is the adapter for builds whose -b takes Mbit/s.
var espIDF = newESP(false)

// newESP returns the ESP-IDF adapter; bits says -b takes bit/s.
func newESP(bits bool) *Adapter {
	syntax := "-b in Mbit/s"
	if bits {
		syntax = "-b in bit/s"
	}
	return &Adapter{
		Name:    "esp-idf",
		Syntax:  syntax,
		Prompt:  regexp.MustCompile(`[\w.-]*>\s*$`),
		Banner:  regexp.MustCompile(`ESP-ROM:|^rst:0x|^ets [A-Z][a-z]{2} `),
		Detect:  regexp.MustCompile(`(?i)esp-idf|ESP-ROM|esp32|--abort`),
		Failed:  regexp.MustCompile(`(?i)unrecognized command|command returned non-zero|invalid argument|invalid option|missing option|unexpected argument|iperf is (already )?running|should specific client/server mode|failed to`),
		Started: regexp.MustCompile(`(?i)mode=\w+-server|server .*(listening|started)`),
		Commands: func(role Role, t Test) ([]string, error) {
			u := ""
			if t.Proto == "udp" {
				u = " -u"
			}
			secs := t.seconds()
			if role == RoleServer {
				return []string{fmt.Sprintf("iperf -s%s -p %d -t %d -i %d", u, t.port(), secs, secs)}, nil
			}
			cmd := fmt.Sprintf("iperf -c %s%s -p %d -t %d -i %d", t.Peer, u, t.port(), secs, secs)
			if t.Length > 0 {
				cmd += fmt.Sprintf(" -l %d", t.Length)
			}
			switch {
			case t.Proto == "udp" && bits:
				cmd += fmt.Sprintf(" -b %d", int64(math.Ceil(t.rate())))
			case t.Proto == "udp":
				// -b takes whole Mbit/s.
				cmd += fmt.Sprintf(" -b %d", int64(math.Max(1, math.Ceil(t.rate()/1e6))))
			}
			return []string{cmd}, nil
		},
		Done: func(role Role, t Test) func(string) bool {
			want := float64(t.seconds())
			return func(l string) bool {
				if espExit.MatchString(l) {
					return true
				}
				end, _, ok := espSummary(l)
				return ok && end >= want
			}
		},
		Parse: func(role Role, t Test, lines []string) (result.Device, error) {
			var d result.Device
			best := -1.0
			for _, l := range lines {
				if end, bps, ok := espSummary(l); ok && end >= best {
					best, d.BitsPerSecond, d.Seconds, d.Raw = end, f64(bps), f64(end), l
				}
			}
			if d.BitsPerSecond == nil {
				return d, fmt.Errorf("esp-idf: no whole-test line (0.0-N sec) in the iperf output")
			}
			return d, nil
		},
		// --abort: the example also knows -a, iperf-cmd only the long form.
		Stop: func(Role, Test) []string { return []string{"iperf --abort"} },
	}
}
