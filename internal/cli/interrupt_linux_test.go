//go:build linux

package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/testutil/wirecap"
)

// Ctrl-C (issue 16, item 2): a first SIGINT ends a client test the proper
// way — the sender stops, the FINs (UDP), the TCP FIN or iperf3's TEST_END
// go out, the peer's report is read — prints the result and exits 0. These
// tests run `wirebench client` as a real subprocess (this test binary,
// running Main), send it a real SIGINT 1 s into a 10 s test against the
// real iperf/iperf3 servers, and count the FINs on the wire with a packet
// capture (wirecap).

// mainHelperEnv makes TestMainHelper run Main with the arguments it holds
// (separated by newlines): it is the wirebench process of these tests.
const mainHelperEnv = "WIREBENCH_TEST_MAIN_ARGS"

// TestMainHelper is the child process: Main with real signal handling.
func TestMainHelper(t *testing.T) {
	args := os.Getenv(mainHelperEnv)
	if args == "" {
		t.Skip("the wirebench child process of the Ctrl-C tests, not a test of its own")
	}
	os.Exit(Main(strings.Split(args, "\n"), os.Stdout, os.Stderr))
}

// interruptPeer is the real peer server of one Ctrl-C test.
type interruptPeer struct {
	name string
	udp  bool
	args func(port int) []string
}

func TestInterruptEndsTestProperly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a packet socket captures the FINs on lo")
	}
	for _, bin := range []string{"iperf", "iperf3"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (./scripts/test installs it as root)", bin)
		}
	}
	cases := []struct {
		name   string
		server []string // the real server, -p PORT appended
		client []string // wirebench client args after the host
		udp    bool
		report *regexp.Regexp // the peer's own report of our test, in its output
	}{
		// The dialect is named: the interrupt is aimed at the test, and a
		// probe (no --dialect) opens the first socket before it.
		{"iperf2 UDP", []string{"iperf", "-s", "-u"}, []string{"--dialect", "iperf2", "-u", "-b", "10M"}, true,
			regexp.MustCompile(`(?m)\]\s+0\.0+-[0-9.]+ sec .*Bytes .* ms\s+\d+/\s*\d+`)},
		{"iperf2 TCP", []string{"iperf", "-s"}, []string{"--dialect", "iperf2"}, false, regexp.MustCompile(`(?m)\]\s+0\.0+-[0-9.]+ sec .*Bytes`)},
		{"iperf3 TCP", []string{"iperf3", "-s", "-1"}, []string{"--dialect", "iperf3"}, false,
			regexp.MustCompile(`(?m)\]\s+0\.00-[0-9.]+\s+sec .*receiver`)},
		{"iperf3 UDP", []string{"iperf3", "-s", "-1"}, []string{"--dialect", "iperf3", "-u", "-b", "10M"}, true,
			regexp.MustCompile(`(?m)\]\s+0\.00-[0-9.]+\s+sec .*receiver`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			udpListen := c.udp && c.server[0] == "iperf" // iperf3 listens on TCP only
			port := freePort(t, udpListen)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var peerOut bytes.Buffer
			peer := exec.CommandContext(ctx, c.server[0], append(c.server[1:], "-p", strconv.Itoa(port))...)
			peer.Stdout, peer.Stderr = &peerOut, &peerOut
			if err := peer.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = peer.Process.Kill(); _ = peer.Wait() })
			waitListening(t, port, udpListen)

			var capture *wirecap.Capture
			if udpListen {
				capture = wirecap.Start(t, "lo", uint16(port))
			}
			args := append([]string{"client", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "10", "--json"}, c.client...)
			child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMainHelper$")
			child.Env = append(os.Environ(), mainHelperEnv+"="+strings.Join(args, "\n"))
			var stdout, stderr bytes.Buffer
			child.Stdout, child.Stderr = &stdout, &stderr
			start := time.Now()
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			// Signal 1 s into the test, not 1 s after the start: on a busy
			// machine the child can take longer than that to reach
			// signal.Notify, and a SIGINT before it is lost (when the
			// child inherited it ignored, as a background job's children
			// do) or kills the process.
			waitSocket(t, child.Process.Pid, 30*time.Second)
			time.Sleep(time.Second)
			if err := child.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err := child.Wait()
			took := time.Since(start)
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			t.Logf("exit %d after %v; stderr: %s", code, took.Round(time.Millisecond), stderr.String())
			if code != 0 {
				t.Errorf("exit code %d after the first Ctrl-C, want 0; stderr:\n%s", code, stderr.String())
			}
			var r result.Result
			if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
				t.Fatalf("output is no JSON result: %v\n%s", err, stdout.String())
			}
			if r.Error != "" {
				t.Errorf("result error %q", r.Error)
			}
			if !hasWarningText(r.Warnings, "stopped early (interrupt)") {
				t.Errorf("no warning that the test was stopped early: %q", r.Warnings)
			}
			if r.Sender == nil || r.Sender.Bytes == 0 || r.Sender.Seconds > 5 {
				t.Errorf("sender %+v: want the ~1 s that ran, not the 10 s asked", r.Sender)
			}
			if c.udp || c.server[0] == "iperf3" {
				// The peer's report, as our client parsed it.
				if r.Receiver == nil || r.Receiver.Source != "peer-report" || r.Receiver.Bytes == 0 {
					t.Errorf("receiver %+v: want the peer's report", r.Receiver)
				}
			}
			if capture != nil {
				// The peer answered our FIN (its report is in the result),
				// so the FIN has passed lo's receive path; the capture may
				// still be reading its queue on a busy machine: wait for it.
				capture.Wait(10*time.Second, func(pkts []wirecap.Packet) bool { return finsOnWire(pkts, port).fins > 0 })
				fins := finsOnWire(capture.Stop(), port)
				st := capture.Stats()
				t.Logf("the capture saw %d datagrams to port %d, %d of them FINs (negative id); capture stats %+v", fins.all, port, fins.fins, st)
				if fins.fins < 1 {
					if st.Lost() {
						t.Errorf("no FIN datagram (negative id) among the %d datagrams captured, but the capture itself lost packets (%+v): the wire cannot be judged", fins.all, st)
					} else {
						t.Errorf("no FIN datagram (negative id) on the wire among %d datagrams", fins.all)
					}
				}
			}
			// The peer printed its report of the test (iperf 2 prints it
			// after the FIN or the TCP close; iperf3 after TEST_END).
			deadline := time.Now().Add(5 * time.Second)
			for !c.report.Match(peerOut.Bytes()) && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if !c.report.Match(peerOut.Bytes()) {
				t.Errorf("%s printed no report of the test:\n%s", c.server[0], peerOut.String())
			}
		})
	}
}

func hasWarningText(ws []string, s string) bool {
	for _, w := range ws {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// freePort returns a loopback port no socket of the kind holds right now.
func freePort(t *testing.T, udp bool) int {
	t.Helper()
	if udp {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitListening waits until a server holds port (ss lists it).
func waitListening(t *testing.T, port int, udp bool) {
	t.Helper()
	flag := "-ltn"
	if udp {
		flag = "-lun"
	}
	for range 1200 { // 30 s: a peer started on a loaded machine can be slow to listen
		out, _ := exec.Command("ss", "-H", flag, "sport = :"+strconv.Itoa(port)).Output()
		if len(bytes.TrimSpace(out)) > 0 {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("no server listening on port %d after 30 s", port)
}

// waitSocket waits until the process pid has a socket open: wirebench's Main
// sets up its signal handling before anything else, so from then on a
// SIGINT reaches it.
func waitSocket(t *testing.T, pid int, timeout time.Duration) {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("the child process is gone before it opened a socket: %v", err)
		}
		for _, ent := range ents {
			if l, err := os.Readlink(dir + "/" + ent.Name()); err == nil && strings.HasPrefix(l, "socket:") {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the child process opened no socket within %v", timeout)
}

// finsOnWire counts the datagrams to port among pkts, and the iperf 2 FINs
// among them: those whose first payload word, the sequence id, is negative.
func finsOnWire(pkts []wirecap.Packet, port int) finCount {
	var n finCount
	for _, p := range pkts {
		if p.Proto != 17 || p.Dst.Port() != uint16(port) || len(p.Head) < 4 {
			continue
		}
		n.all++
		if int32(binary.BigEndian.Uint32(p.Head)) < 0 {
			n.fins++
		}
	}
	return n
}

type finCount struct{ all, fins int }
