package dut

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// An lwIP shell around lwiperf (lwip/apps/lwiperf), as vendor SDK examples
// build it: "iperf -s" / "iperf -c HOST" start lwiperf_start_tcp_server /
// _client, and the report callback prints lwiperf's figures — bytes
// transferred, duration in ms and kbit/s. lwiperf has no UDP and its
// client always runs 10 s (amount −1000, wire-protocols §5.2).
var (
	lMS   = regexp.MustCompile(`(?i)duration \(ms\)\s*:?\s*(\d+)`)
	lKbps = regexp.MustCompile(`(?i)bandwidth \(kbitpsec\)\s*:?\s*(\d+)`)
	lTop  = regexp.MustCompile(`(?i)iperf report`)
)

var lwip = &Adapter{
	Name:    "lwip",
	Prompt:  regexp.MustCompile(`[\w.-]*[>$#]\s*$`),
	Banner:  regexp.MustCompile(`(?i)lwip .*(init|version)|reset cause`),
	Detect:  regexp.MustCompile(`(?i)lwiperf|lwip`),
	Failed:  regexp.MustCompile(`(?i)unknown command|command not found|lwiperf.*(fail|error|abort)|error`),
	Started: nil,
	Commands: func(role Role, t Test) ([]string, error) {
		if t.Proto == "udp" {
			return nil, errors.New("lwip: lwiperf has no UDP (wire-protocols §5.2); use TCP")
		}
		port := ""
		if t.port() != 5001 {
			port = fmt.Sprintf(" -p %d", t.port())
		}
		if role == RoleServer {
			return []string{"iperf -s" + port}, nil
		}
		return []string{"iperf -c " + t.Peer + port}, nil
	},
	Done: func(Role, Test) func(string) bool { return lKbps.MatchString },
	Parse: func(role Role, t Test, lines []string) (result.Device, error) {
		d := result.Device{Raw: raw(lines, lTop)}
		if m := lastMatch(lKbps, lines); m != nil {
			v, _ := number(m[1])
			d.BitsPerSecond = f64(v * 1e3)
		}
		if m := lastMatch(lMS, lines); m != nil {
			v, _ := number(m[1])
			d.Seconds = f64(v / 1e3)
		}
		if d.BitsPerSecond == nil {
			return d, fmt.Errorf("lwip: no \"Bandwidth (kbitpsec)\" in the lwiperf report")
		}
		return d, nil
	},
	Dialect: session.DialectIperf2Legacy,
	Stop:    func(Role, Test) []string { return nil },
}
