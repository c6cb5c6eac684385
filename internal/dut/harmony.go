package dut

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// Microchip Harmony TCP/IP's iperf (tcpip/src/iperf.c): every report line
// is "    - [0.0- 60.2 sec]   0/ 427664 ( 0%)    83574 Kbps" (lost/total,
// loss %, kbit/s); the session line follows a dashed line, then
// "iperf: instance 0 completed ...". A server prints "iperf instance 0: Rx
// done. Socket closed." at the end of each session (a PIC32 board's Harmony 3 firmware).
var (
	hLine   = regexp.MustCompile(`\[\s*0\.0\s*-\s*(\d+(?:\.\d+)?)\s*sec\]\s*(\d+)\s*/\s*(\d+)\s*\(\s*\d+%\)\s*(\d+)\s*Kbps`)
	hDashes = regexp.MustCompile(`^\s*-{10,}\s*$`)
	hDone   = regexp.MustCompile(`(?i)instance \d+:? completed|Rx done`)
)

var harmony = &Adapter{
	Name:    "harmony",
	Prompt:  regexp.MustCompile(`>\s*$`),
	Banner:  regexp.MustCompile(`(?i)TCP/IP Stack: Initialization|Harmony .*(started|initiali[sz]ed)`),
	Detect:  regexp.MustCompile(`(?i)\bdefnet\b|\biperfk\b|Harmony`),
	Failed:  regexp.MustCompile(`(?i)unknown command|Unsupported Configuration|socket failed|unable to|iperf: .*(error|busy)`),
	Started: regexp.MustCompile(`(?i)Starting session instance|Server listening`),
	Commands: func(role Role, t Test) ([]string, error) {
		var pre []string
		if t.Iface != "" {
			pre = append(pre, "defnet "+t.Iface)
		}
		u := ""
		if t.Proto == "udp" {
			u = " -u"
		}
		port := ""
		if t.port() != 5001 {
			port = fmt.Sprintf(" -p %d", t.port())
		}
		if role == RoleServer {
			return append(pre, "iperf -s"+u+port), nil
		}
		cmd := fmt.Sprintf("iperf -c %s%s%s -t %d -i %d", t.Peer, u, port, t.seconds(), t.seconds())
		if t.Length > 0 {
			cmd += fmt.Sprintf(" -l %d", t.Length)
		}
		if t.Proto == "udp" {
			// "100M", "1.5M": Harmony's bw_conversion scales a K suffix
			// only below 1000, so M with decimals is the safe form.
			cmd += " -b " + strconv.FormatFloat(t.rate()/1e6, 'f', -1, 64) + "M"
		}
		return append(pre, cmd), nil
	},
	Done: func(role Role, t Test) func(string) bool {
		dashed := afterAll(hLine, hDashes)
		return func(l string) bool { return hDone.MatchString(l) || dashed(l) }
	},
	Parse: func(role Role, t Test, lines []string) (result.Device, error) {
		var d result.Device
		for i := len(lines) - 1; i >= 0; i-- {
			m := hLine.FindStringSubmatch(lines[i])
			if m == nil {
				continue
			}
			secs, _ := number(m[1])
			lost, _ := number(m[2])
			total, _ := number(m[3])
			kbps, _ := number(m[4])
			d.Seconds, d.Lost, d.Packets, d.BitsPerSecond = f64(secs), i64(int64(lost)), i64(int64(total)), f64(kbps*1e3)
			d.Raw = strings.TrimSpace(lines[i])
			return d, nil
		}
		return d, fmt.Errorf("harmony: no [0.0- N sec] session line in the iperf output")
	},
	Dialect:            session.DialectIperf2Legacy,
	PacketsIncludeLost: true,
	Stop:               func(Role, Test) []string { return []string{"iperfk"} },
}
