//go:build linux

package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
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
)

// Ctrl-C (issue 16, item 2): a first SIGINT ends a client test the proper
// way — the sender stops, the FINs (UDP), the TCP FIN or iperf3's TEST_END
// go out, the peer's report is read — prints the result and exits 0. These
// tests run `wirebench client` as a real subprocess (this test binary,
// running Main), send it a real SIGINT 1 s into a 10 s test against the
// real iperf/iperf3 servers, and count the FINs on the wire with tcpdump.

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
		t.Skip("needs root: tcpdump captures the FINs on lo")
	}
	for _, bin := range []string{"iperf", "iperf3", "tcpdump"} {
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
		{"iperf2 UDP", []string{"iperf", "-s", "-u"}, []string{"-u", "-b", "10M"}, true,
			regexp.MustCompile(`(?m)\]\s+0\.0+-[0-9.]+ sec .*Bytes .* ms\s+\d+/\s*\d+`)},
		{"iperf2 TCP", []string{"iperf", "-s"}, nil, false, regexp.MustCompile(`(?m)\]\s+0\.0+-[0-9.]+ sec .*Bytes`)},
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

			var capture *tcpdump
			if udpListen {
				capture = startTCPDump(t, ctx, port)
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
				fins := capture.stop(t)
				t.Logf("tcpdump saw %d datagrams to port %d, %d of them FINs (negative id)", fins.all, port, fins.fins)
				if fins.fins < 1 {
					t.Errorf("no FIN datagram (negative id) on the wire among %d datagrams", fins.all)
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
	for range 200 {
		out, _ := exec.Command("ss", "-H", flag, "sport = :"+strconv.Itoa(port)).Output()
		if len(bytes.TrimSpace(out)) > 0 {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("no server listening on port %d after 5 s", port)
}

// tcpdump is a running capture of the UDP datagrams to one port on lo.
type tcpdump struct {
	cmd  *exec.Cmd
	file string
}

type finCount struct{ all, fins int }

func startTCPDump(t *testing.T, ctx context.Context, port int) *tcpdump {
	t.Helper()
	file := t.TempDir() + "/lo.pcap"
	cmd := exec.CommandContext(ctx, "tcpdump", "-i", "lo", "-n", "-U", "--immediate-mode", "-s", "64", "-w", file, "udp and dst port "+strconv.Itoa(port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		closed := false
		for sc.Scan() {
			if !closed && strings.Contains(sc.Text(), "listening on") {
				close(ready)
				closed = true
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("tcpdump did not start listening within 10 s")
	}
	return &tcpdump{cmd: cmd, file: file}
}

// stop ends the capture and counts the datagrams and the FINs among them.
func (d *tcpdump) stop(t *testing.T) finCount {
	t.Helper()
	// --immediate-mode -U: each packet is written as it comes; give the
	// last ones a moment before the interrupt ends the capture.
	time.Sleep(500 * time.Millisecond)
	_ = d.cmd.Process.Signal(syscall.SIGINT)
	_ = d.cmd.Wait()
	data, err := os.ReadFile(d.file)
	if err != nil {
		t.Fatal(err)
	}
	n, err := countFINs(data)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// countFINs reads a pcap file of Ethernet-framed IPv4 UDP datagrams (lo
// has an Ethernet header on Linux) and counts the datagrams and those whose
// first payload word, the iperf2 sequence id, is negative.
func countFINs(data []byte) (finCount, error) {
	var n finCount
	if len(data) < 24 {
		return n, fmt.Errorf("pcap file of %d bytes", len(data))
	}
	var bo binary.ByteOrder = binary.LittleEndian
	switch binary.LittleEndian.Uint32(data) {
	case 0xa1b2c3d4, 0xa1b23c4d:
	default:
		bo = binary.BigEndian
	}
	if lt := bo.Uint32(data[20:]); lt != 1 {
		return n, fmt.Errorf("pcap link type %d, want 1 (Ethernet)", lt)
	}
	for p := data[24:]; len(p) >= 16; {
		incl := int(bo.Uint32(p[8:]))
		if len(p) < 16+incl {
			return n, io.ErrUnexpectedEOF
		}
		frame := p[16 : 16+incl]
		p = p[16+incl:]
		if len(frame) < 14+20 || binary.BigEndian.Uint16(frame[12:]) != 0x0800 {
			continue
		}
		ip := frame[14:]
		ihl := int(ip[0]&0xF) * 4
		if ip[9] != 17 || len(ip) < ihl+8+4 {
			continue
		}
		n.all++
		if int32(binary.BigEndian.Uint32(ip[ihl+8:])) < 0 {
			n.fins++
		}
	}
	return n, nil
}
