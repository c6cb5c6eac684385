package iperf2

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// Helpers to run the real iperf 2 binary as the peer of an interop test:
// start it on a free loopback port, capture its output, kill it when the
// test ends, and parse the lines it prints. Its numbers are read with
// "-f B", which prints transfers as exact byte counts.

// iperfPeer is one running iperf process.
type iperfPeer struct {
	args []string
	out  *loopback.Buffer
	done chan struct{}
	err  error  // Wait's result, valid after done is closed
	stop func() // kills iperf (if it still runs) and waits for it
}

// isDone says whether ch is closed.
func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// iperfBinary returns the path of iperf, or skips the test when it is not
// installed.
func iperfBinary(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("iperf")
	if err != nil {
		t.Skip("iperf (2.1.8) is not installed: these interop tests need it (CI installs it with apt-get install iperf)")
	}
	return path
}

// startIperfPeer runs iperf with args, killed after limit at the latest and
// in any case when the test ends. Its output is logged if the test fails.
func startIperfPeer(t *testing.T, limit time.Duration, args ...string) *iperfPeer {
	t.Helper()
	path := iperfBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	cmd := exec.CommandContext(ctx, path, args...)
	p := &iperfPeer{args: args, out: &loopback.Buffer{}, done: make(chan struct{})}
	p.stop = func() { cancel(); <-p.done }
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting iperf %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
		if t.Failed() {
			t.Logf("output of iperf %s:\n%s", strings.Join(args, " "), p.out.String())
		}
	})
	return p
}

// waitFor polls the output for s for up to d.
func (p *iperfPeer) waitFor(s string, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if strings.Contains(p.out.String(), s) {
			return true
		}
		select {
		case <-p.done:
			return strings.Contains(p.out.String(), s)
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
}

// waitExit waits up to d for iperf to exit on its own and returns its
// output; the test fails if it does not.
func (p *iperfPeer) waitExit(t *testing.T, d time.Duration) string {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("iperf %s did not exit within %v", strings.Join(p.args, " "), d)
	}
	return p.out.String()
}

// startIperfServer runs "iperf -s [-u] -f B" on a free loopback port and
// waits until it listens. It returns the peer and the port.
//
// The port was free when FreePort returned, but another test running in
// parallel (or another program) may take it before iperf binds it; iperf
// then exits at once, and another free port is tried, up to 5.
func startIperfServer(t *testing.T, udp bool, extra ...string) (*iperfPeer, int) {
	t.Helper()
	for try := 1; ; try++ {
		port := loopback.FreePort(t)
		args := []string{"-s", "-B", "127.0.0.1", "-p", strconv.Itoa(port), "-f", "B"}
		if udp {
			// A 2 MB receive buffer absorbs the catch-up burst of a sender
			// that the busy test machine stalled, which iperf's 208 KB
			// default turns into loss.
			args = append(args, "-u", "-w", udpPeerBuffer)
		}
		args = append(args, extra...)
		p := startIperfPeer(t, 30*time.Second, args...)
		// iperf 2.1.8 prints its banner before it binds: a failed bind
		// ("listener bind failed: Address already in use") follows within
		// milliseconds, and then the process exits or idles.
		if p.waitFor("Server listening", 5*time.Second) && !p.waitFor("bind failed", bindGrace) && !isDone(p.done) {
			return p, port
		}
		if try < 5 && (strings.Contains(p.out.String(), "bind failed") || isDone(p.done)) {
			t.Logf("iperf %s could not listen (%s): trying another port", strings.Join(args, " "), strings.TrimSpace(p.out.String()))
			p.stop()
			continue
		}
		t.Fatalf("iperf %s did not start listening:\n%s", strings.Join(args, " "), p.out.String())
	}
}

// udpPeerBuffer is iperf's -w for UDP tests.
const udpPeerBuffer = "2M"

// iperfLine is one figures line of iperf's output:
//
//	[ *3] 0.0000-1.0234 sec  129360 Bytes  126397 Bytes/sec   0.003 ms 0/88 (0%)
type iperfLine struct {
	ID         string // "1", "*3" (a reverse flow), "SUM", ...
	Start, End float64
	Bytes      int64
	Text       string // the line
	UDP        bool   // it has jitter and Lost/Total columns
	JitterMS   float64
	Lost       int64
	Total      int64
}

// iperfLineRE matches a transfer line printed with -f B; the optional tail
// is the UDP receiver columns.
var iperfLineRE = regexp.MustCompile(`^\[\s*(\*?\d+|SUM[-\d]*)\]\s+(\d+\.\d+)-(\d+\.\d+) sec\s+(\d+) Bytes\s+\d+ Bytes/sec` +
	`(?:\s+(\S+) ms\s+(-?\d+)/\s*(-?\d+) \()?`)

// iperfLines parses every transfer line of out.
func iperfLines(out string) []iperfLine {
	var lines []iperfLine
	for _, s := range strings.Split(out, "\n") {
		m := iperfLineRE.FindStringSubmatch(strings.TrimSpace(s))
		if m == nil {
			continue
		}
		l := iperfLine{ID: m[1], Text: s}
		l.Start, _ = strconv.ParseFloat(m[2], 64)
		l.End, _ = strconv.ParseFloat(m[3], 64)
		l.Bytes, _ = strconv.ParseInt(m[4], 10, 64)
		if m[5] != "" {
			l.UDP = true
			l.JitterMS, _ = strconv.ParseFloat(m[5], 64)
			l.Lost, _ = strconv.ParseInt(m[6], 10, 64)
			l.Total, _ = strconv.ParseInt(m[7], 10, 64)
		}
		lines = append(lines, l)
	}
	return lines
}

// iperfSentRE matches "[  1] Sent 660 datagrams".
var iperfSentRE = regexp.MustCompile(`\[\s*\*?(\d+)\] Sent (\d+) datagrams`)

// iperfSent returns the "Sent N datagrams" counts by stream id.
func iperfSent(out string) map[string]int64 {
	sent := map[string]int64{}
	for _, m := range iperfSentRE.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		sent[m[1]] = n
	}
	return sent
}

// iperfOutOfOrderRE matches "[  1] 3 datagrams received out-of-order".
var iperfOutOfOrderRE = regexp.MustCompile(`(\d+) datagrams received out-of-order`)

// findLine returns the only line that satisfies keep, failing the test
// when there is not exactly one.
func findLine(t *testing.T, out string, what string, keep func(iperfLine) bool) iperfLine {
	t.Helper()
	var got []iperfLine
	for _, l := range iperfLines(out) {
		if keep(l) {
			got = append(got, l)
		}
	}
	if len(got) != 1 {
		t.Fatalf("want exactly one iperf line for %s, got %d: %v\noutput:\n%s", what, len(got), got, out)
	}
	return got[0]
}

// isReverseID tells iperf's reverse-flow line ids ("*3") from forward ones.
func isReverseID(id string) bool { return strings.HasPrefix(id, "*") }

// isStreamID says id is a stream's own line, not a SUM.
func isStreamID(id string) bool { return !strings.HasPrefix(id, "SUM") }

// checkSaneIperfText fails the test when iperf's output shows what a
// broken peer makes it print (wire-protocols.md §1.5, §6.2).
func checkSaneIperfText(t *testing.T, out string) {
	t.Helper()
	for _, bad := range []string{"-nan", "nan%", "TBytes", "did not receive ack", "permit key fail"} {
		if strings.Contains(out, bad) {
			t.Errorf("iperf printed %q:\n%s", bad, out)
		}
	}
}

// checkTCPBytes compares iperf's TCP byte count for a flow with ours;
// want is the difference (theirs − ours) the spec predicts.
func checkTCPBytes(t *testing.T, what string, theirs, ours, want int64) {
	t.Helper()
	t.Logf("%s: iperf counted %d bytes, we %d (difference %d, expected %d)", what, theirs, ours, theirs-ours, want)
	if ours == 0 || theirs-ours != want {
		t.Errorf("%s: iperf counted %d bytes, we %d: difference %d, want %d", what, theirs, ours, theirs-ours, want)
	}
}

func (l iperfLine) String() string {
	if l.UDP {
		return fmt.Sprintf("[%s] %.4f-%.4f %d B %d/%d", l.ID, l.Start, l.End, l.Bytes, l.Lost, l.Total)
	}
	return fmt.Sprintf("[%s] %.4f-%.4f %d B", l.ID, l.Start, l.End, l.Bytes)
}
