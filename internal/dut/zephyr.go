package dut

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// Zephyr's zperf shell. Three syntaxes are in use, told apart by the
// Zephyr version (kernel version, or the boot banner):
//
//   - "2.7": the zperf sample of Zephyr 2.x (samples/net/zperf). Its
//     "Kbps" and "K" are 1024-based (shell_utils.c: KBPS = {1024, 0},
//     K = {1024*1024, 1024}), it has no "download stop": a server, once
//     started, listens on its port until the board resets, and a second
//     "zperf udp download" answers "UDP server already started!". Its UDP
//     uses the 12-byte iperf 2.0.5 header.
//   - "3.x": the zperf library (subsys/net/lib/zperf, Zephyr 3.3 to 4.1):
//     1000-based units, "zperf udp|tcp download stop", "zperf tcp upload"
//     without a rate, the 12-byte UDP header; a dual-stack build tries
//     IPv6 first and prints the yellow note "Invalid IPv6 address …" for an
//     IPv4 peer before it connects.
//   - "current": Zephyr 4.2 and later (PR #88742): the 16-byte iperf 2.1
//     UDP header; "tcp upload" takes a rate it ignores with a warning.
//   - "iperf3": a build with CONFIG_NET_ZPERF_IPERF3 (the sample's
//     overlay-iperf3.conf, experimental) speaks iperf3 instead of iPerf 2
//     with the same shell commands and reports; its default port is 5201
//     (zperf_iperf3.h). "zperf tcp download" and "zperf udp download"
//     each enable their protocol on one shared listener, one test at a
//     time, single stream; -R, --bidir, -P and -O are refused with
//     iperf3's IEUNIMP (zperf_iperf3_server.c check_params). Nothing the
//     shell prints without a test tells such a build from an iPerf 2 one,
//     so it is named: --dut-shell zephyr-iperf3 (ZephyrIperf3Shell).
//
// Numbers come from print_number: "95.07 Mbps", "1000 Kbps", "10.45 s",
// "198 us"; builds before the tab-aligned lower-case lines print
// "Received packets: 84531" and "Rate: 95.07 Mbps" (Zephyr 3.6 on an MIMXRT1170-EVK, docs/dut.md).
var (
	zRate      = regexp.MustCompile(`(?i)^\s*rate:\s*([\d][\d., ]*?)\s*(Gbps|Mbps|Kbps|bps)\b`)
	zDuration  = regexp.MustCompile(`(?i)^\s*duration:\s*([\d][\d.,]*)\s*(us|ms|s|m)\b`)
	zJitter    = regexp.MustCompile(`(?i)^\s*jitter:?\s*([\d][\d.,]*)\s*(us|ms|s)\b`)
	zReceived  = regexp.MustCompile(`(?i)received packets:\s*([\d,]+)`)
	zLost      = regexp.MustCompile(`(?i)(?:nb|num) packets lost:\s*([\d,]+)`)
	zOutorder  = regexp.MustCompile(`(?i)(?:nb packets outorder|num packets out (?:of )?order):\s*([\d,]+)`)
	zSent      = regexp.MustCompile(`(?i)^\s*num packets:\s*([\d,]+)`)
	zNbLost    = regexp.MustCompile(`(?i)^\s*nb packets lost:`)
	zReportTop = regexp.MustCompile(`(?i)end of session|session ended|upload completed`)

	// zNote matches lines that are informational however they read: the
	// IPv6-first note of a dual-stack build, the ignored TCP rate, and
	// the warnings zperf logs about a peer's report.
	zNote = regexp.MustCompile(`(?i)^\s*(Invalid IPv[46] address|TCP upload will ignore|Remote port is|Connecting to|Unexpected response flags|Network packet too short|Drain one spurious)`)
	// zFailed matches what zperf and the Zephyr shell print when a
	// command is refused or a test fails.
	zFailed = regexp.MustCompile(`(?i)command not found|wrong parameter count|specify a subcommand|not enough parameters|unrecognized argument|unable to (parse|bind|set|get)|please specify the ip address|invalid ip address|invalid (local|destination) ipv[46] address|invalid port|failed to|upload failed|session error|cannot (bind|get|send|set|receive)|fail to retrieve|connect failed|not supported|support is not enabled|parse error|server not running|last packet not received|already started`)
	zBusy   = regexp.MustCompile(`(?i)(UDP|TCP) server already started`)
	zBanner = regexp.MustCompile(`\*\*\* Booting Zephyr OS`)
	// zVersion reads the version from "Zephyr version 3.4.0" (kernel
	// version) or "*** Booting Zephyr OS build zephyr-v3.4.0 ***".
	zVersion = regexp.MustCompile(`Zephyr (?:version|OS build)\s+(?:zephyr-)?v?(\d+)\.(\d+)(?:\.(\d+))?`)
)

// zephyrSyntax is one generation of the zperf shell.
type zephyrSyntax struct {
	name    string  // "2.7", "3.x", "current"
	kilo    float64 // the shell's K: 1024 (2.x) or 1000
	stop    bool    // has "download stop"
	swapped bool    // its server prints loss and reordering under each other's names
	dialect string  // our client's dialect towards its UDP server
	iperf3  bool    // speaks iperf3 (CONFIG_NET_ZPERF_IPERF3)
}

var (
	zephyr27      = zephyrSyntax{name: "2.7", kilo: 1024, swapped: true, dialect: session.DialectIperf2Legacy}
	zephyr3x      = zephyrSyntax{name: "3.x", kilo: 1000, stop: true, dialect: session.DialectIperf2Legacy}
	zephyrCurrent = zephyrSyntax{name: "current", kilo: 1000, stop: true}
	zephyrIperf3  = zephyrSyntax{name: "iperf3", kilo: 1000, stop: true, dialect: session.DialectIperf3, iperf3: true}
)

// ZephyrIperf3Shell is the --dut-shell name of a Zephyr whose zperf is
// built for iperf3 (CONFIG_NET_ZPERF_IPERF3): the shell cannot be told
// from an iPerf 2 build by what it prints, so the user names it.
const ZephyrIperf3Shell = "zephyr-iperf3"

// zephyrIperf3Adapter is the adapter --dut-shell zephyr-iperf3 names; its
// Name stays "zephyr" (the device JSON's shell), its Syntax says iperf3.
var zephyrIperf3Adapter = newZephyr(zephyrIperf3)

// zephyrPort is the port of t in syn: iperf3's 5201 when none is given.
func zephyrPort(syn zephyrSyntax, t Test) int {
	if syn.iperf3 && t.Port == 0 {
		return session.DefaultIperf3Port
	}
	return t.port()
}

// zephyrVersion reads a Zephyr version from the output of kernel version
// or the boot banner.
func zephyrVersion(lines []string) (major, minor, patch int, ok bool) {
	m := lastMatch(zVersion, lines)
	if m == nil {
		return 0, 0, 0, false
	}
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	patch, _ = strconv.Atoi(m[3])
	return major, minor, patch, true
}

// zephyrIperf3For describes a Zephyr named as an iperf3 build, with its
// version when known.
func zephyrIperf3For(major, minor, patch int, ok bool) (*Adapter, string) {
	if !ok {
		return zephyrIperf3Adapter, "Zephyr, version unknown (zperf iperf3 mode, named by --dut-shell " + ZephyrIperf3Shell + ")"
	}
	return zephyrIperf3Adapter, fmt.Sprintf("Zephyr %d.%d.%d (zperf iperf3 mode, named by --dut-shell %s)", major, minor, patch, ZephyrIperf3Shell)
}

// zephyrFor returns the adapter for a Zephyr version (ok false: unknown,
// the current syntax) and describes what was chosen.
func zephyrFor(major, minor, patch int, ok bool) (*Adapter, string) {
	if !ok {
		return newZephyr(zephyrCurrent), "Zephyr, version unknown (kernel version gave none): zperf syntax of current Zephyr assumed"
	}
	syn := zephyrCurrent
	switch {
	case major < 3 || major == 3 && minor < 3:
		syn = zephyr27
	case major < 4 || major == 4 && minor < 2:
		syn = zephyr3x
	}
	return newZephyr(syn), fmt.Sprintf("Zephyr %d.%d.%d (zperf %s syntax)", major, minor, patch, syn.name)
}

// zephyr is the adapter before the version is known (detection, lookup).
var zephyr = newZephyr(zephyrCurrent)

func newZephyr(syn zephyrSyntax) *Adapter {
	return &Adapter{
		Name:    "zephyr",
		Prompt:  regexp.MustCompile(`^(?:\s*uart:~\$\s*)+$`), // at the start of a line: a prompt redrawn after output is erased before more comes
		Banner:  zBanner,
		Detect:  regexp.MustCompile(`(?i)\bzperf\b|Zephyr|uart:~\$`), // the default prompt tells a Zephyr shell without zperf
		Failed:  zFailed,
		Note:    zNote,
		Busy:    zBusy,
		Started: regexp.MustCompile(`(?i)(UDP|TCP) server started`),
		Dialect: syn.dialect,
		Syntax:  syn.name,
		Commands: func(role Role, t Test) ([]string, error) {
			if role == RoleServer {
				return []string{fmt.Sprintf("zperf %s download %d", t.Proto, zephyrPort(syn, t))}, nil
			}
			size := t.Length
			if size == 0 {
				size = 1024 // zperf's own default is 256 bytes; 1K is what its docs and users' transcripts use
			}
			if t.Proto == "tcp" {
				// No rate: 3.x takes none, current ignores it.
				return []string{fmt.Sprintf("zperf tcp upload %s %d %d %d", t.Peer, zephyrPort(syn, t), t.seconds(), size)}, nil
			}
			if syn.kilo != 1000 {
				// 2.x: a bare number is bit/s, the shell rounds it up to
				// its 1024-bit "kbps".
				return []string{fmt.Sprintf("zperf udp upload %s %d %d %d %d", t.Peer, t.port(), t.seconds(), size, int64(math.Ceil(t.rate())))}, nil
			}
			kbps := int64(math.Ceil(t.rate() / 1000))
			return []string{fmt.Sprintf("zperf udp upload %s %d %d %d %dK", t.Peer, zephyrPort(syn, t), t.seconds(), size, kbps)}, nil
		},
		Done: func(role Role, t Test) func(string) bool {
			if role == RoleServer {
				return afterAll(zRate, zDuration)
			}
			return afterAll(zRate, zDuration, zSent)
		},
		Parse: func(role Role, t Test, lines []string) (result.Device, error) {
			return zephyrParse(syn, role, t, lines)
		},
		Stop: func(role Role, t Test) []string {
			if role == RoleServer && syn.stop {
				return []string{fmt.Sprintf("zperf %s download stop", t.Proto)}
			}
			return nil
		},
	}
}

// zephyrRate converts a printed rate: 2.x's Kbps and Mbps are 1024 and
// 1024² bit/s.
func zephyrRate(syn zephyrSyntax, num, unit string) (float64, bool) {
	v, ok := scaled(num, unit)
	if !ok || syn.kilo == 1000 {
		return v, ok
	}
	switch unitScale[strings.ToLower(unit)] {
	case 1e3:
		return v / 1e3 * 1024, true
	case 1e6:
		return v / 1e6 * 1024 * 1024, true
	}
	return v, true
}

func zephyrParse(syn zephyrSyntax, role Role, t Test, lines []string) (result.Device, error) {
	lines = withoutLogs(lines)
	d := result.Device{Raw: raw(lines, zReportTop)}
	if m := lastMatch(zRate, lines); m != nil {
		if v, ok := zephyrRate(syn, m[1], m[2]); ok {
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
		if !syn.iperf3 || role == RoleServer {
			// An iperf3 server's results carry no out-of-order count:
			// the client's report has none to print.
			count(&d.OutOfOrder, zOutorder, lines)
		}
		if syn.swapped && role == RoleServer && lastMatch(zNbLost, lines) != nil {
			// The sample's receiver prints its out-of-order count as
			// "nb packets lost" and its loss as "nb packets outorder".
			d.Lost, d.OutOfOrder = d.OutOfOrder, d.Lost
		}
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
}
