//go:build linux

package iperf3

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// These tests talk to the real iperf3 binary over 127.0.0.1 only, with
// bounded durations and byte counts; every process is killed at cleanup.

func needIperf3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("iperf3")
	if err != nil {
		t.Skip("iperf3 not installed")
	}
	return p
}

// startIperf3Server runs `iperf3 -s -1` on a free port and waits until it
// accepts connections.
func startIperf3Server(t *testing.T, bin string) (port int, out *bytes.Buffer) {
	t.Helper()
	port = loopback.FreePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cmd := exec.CommandContext(ctx, bin, "-s", "-1", "-B", "127.0.0.1", "-p", strconv.Itoa(port))
	out = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	// iperf3 -s -1 serves exactly one test, so probe with a plain listen
	// check: bind fails while iperf3 holds the port.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			return port, out
		}
		l.Close()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("iperf3 server did not start")
	return 0, nil
}

func runIperf3Client(t *testing.T, bin string, port int, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	all := append([]string{"-c", "127.0.0.1", "-p", strconv.Itoa(port)}, args...)
	out, err := exec.CommandContext(ctx, bin, all...).CombinedOutput()
	if err != nil {
		t.Fatalf("iperf3 %v: %v\n%s", all, err, out)
	}
	return out
}

// TestRealIperf3JSONReport decodes real `iperf3 -J` output with our Report
// type, rejecting unknown fields, and checks the re-encoded document is the
// same document (same keys, same values).
func TestRealIperf3JSONReport(t *testing.T) {
	bin := needIperf3(t)
	cases := map[string][]string{
		"tcp":           {"-t", "1"},
		"udp":           {"-t", "1", "-u", "-b", "1M", "-l", "200"},
		"bidir":         {"-t", "1", "--bidir"},
		"reverse":       {"-t", "1", "-R"},
		"udp bidir":     {"-t", "1", "-u", "-b", "1M", "-l", "200", "--bidir"},
		"server output": {"-n", "1M", "--get-server-output"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			port, _ := startIperf3Server(t, bin)
			out := runIperf3Client(t, bin, port, append(args, "-J")...)
			var rep Report
			dec := json.NewDecoder(bytes.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&rep); err != nil {
				t.Fatalf("decoding real -J output: %v\n%s", err, out)
			}
			again, err := json.Marshal(&rep)
			if err != nil {
				t.Fatal(err)
			}
			var orig, back any
			if err := json.Unmarshal(out, &orig); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(again, &back); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(orig, back); d != "" {
				t.Fatalf("round trip differs (-iperf3 +ours):\n%s", d)
			}
			// A 1 MB -n test on loopback can end before iperf3 closes its
			// first interval, and iperf3's server may stop counting at
			// TEST_END before it read anything (seen: 0 received bytes):
			// for it only the sender's count is firm.
			timed := slices.Contains(args, "-t")
			if timed && (rep.End.SumReceived == nil || rep.End.SumReceived.Bytes <= 0 || len(rep.Intervals) == 0) ||
				!timed && (rep.End.SumSent == nil || rep.End.SumSent.Bytes < 1<<20) {
				t.Fatalf("implausible report (%d intervals): %+v", len(rep.Intervals), rep.End)
			}
			if len(rep.ServerOutputJSON) > 0 {
				var srv Report
				dec := json.NewDecoder(bytes.NewReader(rep.ServerOutputJSON))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&srv); err != nil {
					t.Fatalf("decoding server_output_json: %v", err)
				}
				if srv.Start.AcceptedConnection == nil {
					t.Fatal("server report has no accepted_connection")
				}
			}
		})
	}
}

// waitSent waits (bounded) until the kernel has no unacknowledged bytes of c
// left, so what we wrote sits in the peer's receive buffer before TEST_END.
func waitSent(t *testing.T, c *net.TCPConn) {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for range 500 {
		var outq int
		_ = raw.Control(func(fd uintptr) { outq, err = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) })
		if err != nil || outq == 0 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	// The peer reads its socket in a select loop; give it a moment to
	// drain the buffer before TEST_END stops its counting.
	time.Sleep(100 * time.Millisecond)
}

// TestClientConversationWithRealServer plays a minimal iperf3 client built
// only from this package's codec against a real `iperf3 -s -1`, and checks
// that iperf3 received exactly the bytes we wrote.
func TestClientConversationWithRealServer(t *testing.T) {
	bin := needIperf3(t)
	port, srvOut := startIperf3Server(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	ctrlConn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ctrlConn.Close()
	ctrl := NewConn(ctrlConn)
	m := NewMachine(RoleClient)
	expect := func(want State) {
		t.Helper()
		s, err := ctrl.ReadState(ctx)
		if err != nil {
			t.Fatalf("waiting for %v: %v\nserver: %s", want, err, srvOut)
		}
		if err := m.Recv(s); err != nil || s != want {
			t.Fatalf("got %v (%v), want %v\nserver: %s", s, err, want, srvOut)
		}
	}
	send := func(s State) {
		t.Helper()
		if err := m.Send(s); err != nil {
			t.Fatal(err)
		}
		if err := ctrl.WriteState(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	cookie, err := NewCookie(nil)
	must(err)
	must(ctrl.WriteCookie(ctx, cookie))
	expect(ParamExchange)
	must(ctrl.WriteParams(ctx, &Params{Protocol: ProtoTCP, Time: 10, Parallel: 1, Len: 64 << 10,
		ClientVersion: "3.12", WB: &WBParams{Version: WBVersion}}))
	expect(CreateStreams)
	dataConn, err := net.Dial("tcp", addr)
	must(err)
	defer dataConn.Close()
	_, err = dataConn.Write(cookie.AppendWire(nil))
	must(err)
	expect(TestStart)
	expect(TestRunning)

	const total = 3<<20 + 12345 // not a multiple of the block length
	payload := bytes.Repeat([]byte("wirebench"), 8000)
	for sent := 0; sent < total; {
		n, err := dataConn.Write(payload[:min(len(payload), total-sent)])
		must(err)
		sent += n
	}
	waitSent(t, dataConn.(*net.TCPConn))
	send(TestEnd)
	expect(ExchangeResults)
	must(ctrl.WriteResults(ctx, &Results{SenderHasRetransmits: -1,
		Streams: []StreamResult{{ID: 1, Bytes: total, Retransmits: -1, EndTime: 1}}}))
	theirs, err := ctrl.ReadResults(ctx)
	must(err)
	expect(DisplayResults)
	send(IperfDone)

	s := theirs.Stream(1)
	if s == nil {
		t.Fatalf("no stream 1 in server results %+v", theirs)
	}
	if s.Bytes != total {
		t.Fatalf("iperf3 received %d bytes, we wrote %d\nserver: %s", s.Bytes, total, srvOut)
	}
	if theirs.WB != nil {
		t.Fatal("plain iperf3 cannot send the wirebench extension")
	}
}

// serveOneIperf3Test is a minimal iperf3 server built only from this
// package's codec: one TCP test, client sending, one stream. It returns the
// bytes it counted.
func serveOneIperf3Test(ctx context.Context, l net.Listener) (int64, error) {
	c, err := l.Accept()
	if err != nil {
		return 0, err
	}
	defer c.Close()
	ctrl := NewConn(c)
	m := NewMachine(RoleServer)
	send := func(s State) error {
		if err := m.Send(s); err != nil {
			return err
		}
		return ctrl.WriteState(ctx, s)
	}
	cookie, err := ctrl.ReadCookie(ctx)
	if err != nil {
		return 0, err
	}
	if err := send(ParamExchange); err != nil {
		return 0, err
	}
	p, err := ctrl.ReadParams(ctx)
	if err != nil {
		return 0, err
	}
	if err := p.Validate(); err != nil || p.Reverse || p.Bidirectional || p.TotalStreams() != 1 || p.Protocol == ProtoUDP {
		return 0, errors.New("test server handles one forward TCP stream only")
	}
	if err := send(CreateStreams); err != nil {
		return 0, err
	}
	d, err := l.Accept()
	if err != nil {
		return 0, err
	}
	defer d.Close()
	dc := NewConn(d)
	got, err := dc.ReadCookie(ctx)
	if err != nil || got != cookie {
		return 0, errors.New("bad data stream cookie")
	}
	if err := send(TestStart); err != nil {
		return 0, err
	}
	if err := send(TestRunning); err != nil {
		return 0, err
	}
	var counted atomic.Int64
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 128<<10)
		for {
			n, err := d.Read(buf)
			counted.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	s, err := ctrl.ReadState(ctx)
	if err == nil {
		err = m.Recv(s)
	}
	if err != nil || s != TestEnd {
		return 0, errors.Join(errors.New("want TEST_END"), err)
	}
	if err := send(ExchangeResults); err != nil {
		return 0, err
	}
	theirs, err := ctrl.ReadResults(ctx)
	if err != nil {
		return 0, err
	}
	// Drain until we have what the client says it sent, or 2 s pass.
	if st := theirs.Stream(1); st != nil {
		for deadline := time.Now().Add(2 * time.Second); counted.Load() < st.Bytes && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	_ = d.Close()
	<-readDone
	ours := &Results{CPUUtilTotal: 1, SenderHasRetransmits: 0, Streams: []StreamResult{
		{ID: 1, Bytes: counted.Load(), Retransmits: -1, EndTime: 1},
	}}
	if p.GetServerOutput {
		ours.ServerOutputText = "wirebench test server\n"
	}
	if err := ctrl.WriteResults(ctx, ours); err != nil {
		return 0, err
	}
	if err := send(DisplayResults); err != nil {
		return 0, err
	}
	s, err = ctrl.ReadState(ctx)
	if err == nil {
		err = m.Recv(s)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	return counted.Load(), nil
}

// TestServerConversationWithRealClient answers a real `iperf3 -c -n 1M`
// with the minimal server above.
func TestServerConversationWithRealClient(t *testing.T) {
	bin := needIperf3(t)
	for _, jsonOut := range []bool{false, true} {
		t.Run("json="+strconv.FormatBool(jsonOut), func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			type res struct {
				n   int64
				err error
			}
			done := make(chan res, 1)
			go func() {
				n, err := serveOneIperf3Test(ctx, l)
				done <- res{n, err}
			}()
			args := []string{"-n", "1M", "--get-server-output"}
			if jsonOut {
				args = append(args, "-J")
			}
			out := runIperf3Client(t, bin, l.Addr().(*net.TCPAddr).Port, args...)
			r := <-done
			if r.err != nil {
				t.Fatalf("server: %v\nclient: %s", r.err, out)
			}
			if r.n != 1<<20 {
				t.Fatalf("counted %d bytes, want %d\nclient: %s", r.n, 1<<20, out)
			}
			for _, bad := range []string{"unable to receive results", "control socket has closed unexpectedly", "error"} {
				if strings.Contains(string(out), bad) {
					t.Fatalf("client output contains %q:\n%s", bad, out)
				}
			}
			if !jsonOut {
				if !strings.Contains(string(out), "iperf Done.") || !strings.Contains(string(out), "wirebench test server") {
					t.Fatalf("client did not finish cleanly:\n%s", out)
				}
				return
			}
			var rep Report
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatal(err)
			}
			if rep.End.SumReceived == nil || rep.End.SumReceived.Bytes != r.n {
				t.Fatalf("client end.sum_received = %+v, we counted %d", rep.End.SumReceived, r.n)
			}
		})
	}
}
