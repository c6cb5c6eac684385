package dut

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// Role is the device's side of a test.
type Role string

// The two roles a device takes.
const (
	RoleServer Role = "server" // the device receives: wirebench is the client
	RoleClient Role = "client" // the device sends: wirebench is the server
)

// Test is what the device is asked to do.
type Test struct {
	// Proto is "tcp" or "udp".
	Proto string
	// Port is the server port (the device's when it is the server, ours
	// when it is the client); 0 means 5001.
	Port int
	// Peer is the address the device connects to as a client (ours).
	Peer string
	// Duration is the test time; 0 means 10 s.
	Duration time.Duration
	// Length is the UDP datagram or TCP write size (0: the firmware's).
	Length int
	// RateBPS is the UDP rate the device sends at as a client (0: 1 Mbit/s).
	RateBPS float64
	// Iface is the interface the device should use (Harmony: defnet).
	Iface string
}

func (t Test) port() int {
	if t.Port == 0 {
		return 5001
	}
	return t.Port
}

func (t Test) seconds() int {
	if t.Duration <= 0 {
		return 10
	}
	return max(1, int((t.Duration+time.Second/2)/time.Second))
}

func (t Test) rate() float64 {
	if t.RateBPS <= 0 {
		return 1e6
	}
	return t.RateBPS
}

// Adapter is what wirebench knows of one firmware's shell.
type Adapter struct {
	// Name is the --dut-shell name.
	Name string
	// Prompt matches the shell's prompt, an unterminated line.
	Prompt *regexp.Regexp
	// Banner matches a line of the boot banner: seen mid-test, it means
	// the device reset.
	Banner *regexp.Regexp
	// Detect matches the banner or help text of this firmware (auto).
	Detect *regexp.Regexp
	// Failed matches a line saying a command was refused or a test failed.
	Failed *regexp.Regexp
	// Note matches lines that are never a failure, whatever Failed says
	// (nil: none); log lines (see logLine) never are either.
	Note *regexp.Regexp
	// Busy matches the line saying the device's server already runs (nil:
	// the firmware has none). A firmware with a stop command is stopped and
	// asked again; one without is taken as serving if this session started
	// it on the same port.
	Busy *regexp.Regexp
	// Syntax names the generation of the firmware's shell syntax the
	// adapter speaks ("": the only one).
	Syntax string
	// Commands returns the commands that start the device in role; the
	// last starts the test, the others are set-up answered by a prompt.
	Commands func(role Role, t Test) ([]string, error)
	// Started matches the line saying a server is ready; nil: the prompt
	// coming back after the command.
	Started *regexp.Regexp
	// Done returns a fresh detector of the end of the device's report.
	Done func(role Role, t Test) func(line string) bool
	// Parse reads the device's figures from its output since the start.
	Parse func(role Role, t Test, lines []string) (result.Device, error)
	// Stop returns the commands that stop the device's test.
	Stop func(role Role, t Test) []string
	// Dialect is the wirebench client dialect the firmware's server needs
	// ("": the default).
	Dialect string
	// PacketsIncludeLost says the server's packet count is what it
	// expected (received plus lost, Harmony's "total"), not what it
	// received (zperf's "received packets").
	PacketsIncludeLost bool
}

// adapters are the known firmwares, in auto-detection order.
var adapters = []*Adapter{zephyr, harmony, lwip, espIDF}

// Shells lists the --dut-shell names, auto included.
func Shells() []string {
	names := []string{}
	for _, a := range adapters {
		names = append(names, a.Name)
	}
	return append(names, ZephyrIperf3Shell, "auto")
}

// Lookup returns the adapter called name ("auto" is not an adapter).
func Lookup(name string) (*Adapter, error) {
	if name == ZephyrIperf3Shell {
		return zephyrIperf3Adapter, nil
	}
	for _, a := range adapters {
		if a.Name == name {
			return a, nil
		}
	}
	return nil, fmt.Errorf("unknown device shell %q: want one of %s", name, strings.Join(Shells(), ", "))
}

// anyPrompt matches the prompt of any known shell (before detection).
var anyPrompt = regexp.MustCompile(`(uart:~\$|[\w.-]*>)\s*$`)

// logLine matches a line of the Zephyr logging subsystem,
// "[00:00:06.730,000] <inf> net_zperf: …" (colours already dropped): kept
// in the transcript, never parsed and never a failure.
var logLine = regexp.MustCompile(`^\s*\[\d+:\d\d:\d\d\.\d{3},\d{3}\]\s*<(?:inf|dbg|wrn|err)>`)

// withoutLogs returns lines without the log lines among them.
func withoutLogs(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if !logLine.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// number parses a device number that may carry thousands separators
// ("92,954", "10 000").
func number(s string) (float64, error) {
	s = strings.NewReplacer(",", "", " ", "", "\u00a0", "").Replace(s)
	return strconv.ParseFloat(s, 64)
}

// unitScale is the multiplier of a rate or time unit as firmwares print
// them.
var unitScale = map[string]float64{
	"bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9,
	"bits/sec": 1, "kbits/sec": 1e3, "mbits/sec": 1e6, "gbits/sec": 1e9,
	"us": 1e-3, "ms": 1, "s": 1e3, "m": 60e3, // to milliseconds
}

func scaled(num, unit string) (float64, bool) {
	v, err := number(num)
	k, ok := unitScale[strings.ToLower(unit)]
	if err != nil || !ok {
		return 0, false
	}
	return v * k, true
}

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

// lastMatch returns the submatches of the last line matching re.
func lastMatch(re *regexp.Regexp, lines []string) []string {
	for i := len(lines) - 1; i >= 0; i-- {
		if m := re.FindStringSubmatch(lines[i]); m != nil {
			return m
		}
	}
	return nil
}

// count sets *dst from the last line matching re (one submatch).
func count(dst **int64, re *regexp.Regexp, lines []string) {
	if m := lastMatch(re, lines); m != nil {
		if v, err := number(m[1]); err == nil {
			*dst = i64(int64(v))
		}
	}
}

// raw joins the report lines: from the first line matching from (or all)
// to the end.
func raw(lines []string, from *regexp.Regexp) string {
	start := 0
	for i := len(lines) - 1; i >= 0; i-- {
		if from.MatchString(lines[i]) {
			start = i
			break
		}
	}
	return strings.TrimSpace(strings.Join(lines[start:], "\n"))
}

// afterAll returns a Done detector: the end is a line matching last once
// every one of first has matched some earlier line, in order.
func afterAll(last *regexp.Regexp, first ...*regexp.Regexp) func(string) bool {
	next := 0
	return func(l string) bool {
		if next < len(first) {
			if first[next].MatchString(l) {
				next++
			}
			return false
		}
		return last.MatchString(l)
	}
}
