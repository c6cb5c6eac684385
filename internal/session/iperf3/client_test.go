package iperf3

import (
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/resultcheck"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/iperf3peer"
	"github.com/wirebench/wirebench/internal/units"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// The real iperf3's helpers are internal/testutil/iperf3peer's, under the
// names these tests use.

func iperf3Bin(t *testing.T) string                              { return iperf3peer.Bin(t) }
func realIperf3Server(t *testing.T) (int, func() *i3wire.Report) { return iperf3peer.Server(t) }
func realIperf3ServerReports(t *testing.T, extra ...string) (int, func() []*i3wire.Report) {
	return iperf3peer.ServerReports(t, extra...)
}

func TestIperf3ClientAgainstRealServer(t *testing.T) {
	cases := []struct {
		name string
		cfg  session.ClientConfig
	}{
		{"tcp 2s", session.ClientConfig{Duration: 2 * time.Second}},
		{"udp 1M 200B", session.ClientConfig{UDP: true, Rate: units.Rate{Value: 1e6}, Length: 200, Duration: time.Second}},
		{"udp 64-bit counters", session.ClientConfig{UDP: true, Rate: units.Rate{Value: 1e6}, Length: 200, Duration: time.Second, UDPCounters64Bit: true}},
		{"tcp -R", session.ClientConfig{Duration: time.Second, Reverse: true}},
		{"udp -R", session.ClientConfig{UDP: true, Rate: units.Rate{Value: 2e6}, Length: 400, Duration: time.Second, Reverse: true}},
		{"tcp --bidir -P 2", session.ClientConfig{Duration: time.Second, Bidir: true, Parallel: 2}},
		{"udp --bidir -P 2", session.ClientConfig{UDP: true, Rate: units.Rate{Value: 2e6}, Length: 300, Duration: time.Second, Bidir: true, Parallel: 2}},
		{"tcp -n", session.ClientConfig{Bytes: 50 << 20}},
	}
	var runs []protocolCase
	for _, tc := range cases {
		runs = append(runs, protocolCase{tc.name, tc.cfg.UDP, func(t *testing.T) {
			cfg := tc.cfg
			r, rep := runAgainstRealIperf3(t, &cfg)
			checkAgainstIperf3Server(t, &cfg, r, rep)
		}})
	}
	// The UDP cases one at a time: the real 3.12 server reads with its
	// default 208 KB socket buffer (about 270 datagrams of 200 bytes, by
	// their kernel size), which no server option enlarges; four of them
	// beside each other on a loaded machine overflowed it (lost 7 and 119
	// of 625).
	runByProtocol(t, false, runs)
}

// runAgainstRealIperf3 runs our iperf3 client with cfg (host, port and
// dialect filled in) against a real `iperf3 -s -1 -J` and returns our
// result and the server's report; a failed test is fatal.
func runAgainstRealIperf3(t *testing.T, cfg *session.ClientConfig) (*result.Result, *i3wire.Report) {
	t.Helper()
	port, report := realIperf3Server(t)
	cfg.Host, cfg.Port, cfg.Dialect = "127.0.0.1", port, session.DialectIperf3
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	r, err := runClient(ctx, *cfg)
	if err != nil {
		t.Fatalf("RunClient: %v", err)
	}
	rep := report()
	if r.Error != "" {
		t.Fatalf("test failed: %s (warnings %q)", r.Error, r.Warnings)
	}
	return r, rep
}

// checkAgainstIperf3Server compares our client's result with what the
// real iperf3 server printed with -J.
func checkAgainstIperf3Server(t *testing.T, cfg *session.ClientConfig, r *result.Result, rep *i3wire.Report) {
	t.Helper()
	if r.Test.Dialect != session.DialectIperf3 {
		t.Errorf("dialect %q", r.Test.Dialect)
	}
	// The server's per-stream figures by role.
	var srvRecv, srvSent int64
	for _, st := range rep.End.Streams {
		s := st.UDP
		if s == nil {
			if st.Receiver != nil && !st.Receiver.Sender {
				srvRecv += st.Receiver.Bytes
			}
			if st.Sender != nil && st.Sender.Sender {
				srvSent += st.Sender.Bytes
			}
			continue
		}
		// 3.12 prints 0 bytes for a receiving UDP stream; its packets
		// (highest sequence number) and lost_packets are right.
		if s.Sender {
			srvSent += s.Bytes
		} else if s.Packets != nil && s.LostPackets != nil {
			srvRecv += (*s.Packets - *s.LostPackets) * int64(cfg.Length)
		}
	}
	if cfg.UDP && !cfg.Bidir && rep.End.SumReceived != nil && rep.End.SumReceived.Bytes != srvRecv {
		t.Errorf("iperf3's sum_received.bytes %d, its streams %d", rep.End.SumReceived.Bytes, srvRecv)
	}
	if !cfg.Reverse {
		if r.Sender == nil || r.Receiver == nil {
			t.Fatalf("sender %+v receiver %+v", r.Sender, r.Receiver)
		}
		if r.Receiver.Source != "peer-report" {
			t.Errorf("receiver source %q", r.Receiver.Source)
		}
		switch written := max(r.Sender.BytesWritten, r.Sender.Bytes); {
		case r.Sender.Bytes == 0 || srvRecv > written:
			t.Errorf("iperf3 server received %d bytes, we wrote %d", srvRecv, written)
		case srvRecv > r.Sender.Bytes:
			// Our TCP figure is what was acknowledged when the brief wait
			// after the last write ended (TEST_END must follow at once);
			// on a busy host the server had read more by then, and our
			// result must say that its figure is cut short.
			resultcheck.SentTCP(t, r, r.Sender)
		case srvRecv < r.Sender.Bytes:
			// A 3.12 server stops counting at TEST_END, which we
			// send right after our last data as iperf3's own client does,
			// with data of ours acknowledged by its kernel but not yet
			// read (--bidir, served from one thread, leaves the most;
			// real iperf3 against itself shows sum_sent > sum_received
			// by up to ~11 MB in 3 of 5 runs here; UDP datagrams still in
			// its socket buffer on a busy host). We must then say so.
			t.Logf("iperf3 server received %d bytes, we sent %d (iperf3 stops counting at TEST_END)", srvRecv, r.Sender.Bytes)
			if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "stops counting") }) {
				t.Errorf("no warning that the iperf3 server counted less than we sent; warnings %q", r.Warnings)
			}
		}
		if r.Receiver.Bytes != srvRecv {
			t.Errorf("our receiver figure %d != iperf3's %d", r.Receiver.Bytes, srvRecv)
		}
		if cfg.UDP && (r.Receiver.Lost != 0 || r.Receiver.Total > r.Sender.Packets) {
			t.Errorf("UDP: lost %d of %d, we sent %d", r.Receiver.Lost, r.Receiver.Total, r.Sender.Packets)
		}
		if cfg.UDP && r.Receiver.Total < r.Sender.Packets {
			// iperf3 stops counting at TEST_END, which follows our last
			// datagram at once: on a busy host some are still unread.
			t.Logf("iperf3's count ends %d datagrams short of ours", r.Sender.Packets-r.Receiver.Total)
			if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "stops counting") }) {
				t.Errorf("no warning that the iperf3 server's count ends short; warnings %q", r.Warnings)
			}
		}
	}
	if cfg.Reverse || cfg.Bidir {
		rcv := r.Receiver
		if cfg.Bidir {
			if r.Reverse == nil {
				t.Fatal("no reverse flow")
			}
			rcv = r.Reverse.Receiver
		}
		if rcv == nil || rcv.Bytes == 0 {
			t.Fatalf("received nothing: %+v", rcv)
		}
		if cfg.UDP {
			if rcv.Lost != 0 {
				t.Errorf("UDP reverse: lost %d of %d", rcv.Lost, rcv.Total)
			}
		} else if rcv.Bytes > srvSent {
			t.Errorf("received %d bytes, the server sent only %d", rcv.Bytes, srvSent)
		}
	}
	if cfg.Parallel > 1 && len(r.Streams) != cfg.Parallel*2 {
		t.Errorf("%d streams in the result", len(r.Streams))
	}
	t.Logf("sent %+v\nreceiver %+v\nreverse %+v\nwarnings %q", r.Sender, r.Receiver, r.Reverse, r.Warnings)
}

// keyPaths lists the object key paths of a JSON document (array elements
// share their array's path).
func keyPaths(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := prefix + "." + k
			out[p] = true
			keyPaths(e, p, out)
		}
	case []any:
		for _, e := range x {
			keyPaths(e, prefix+"[]", out)
		}
	}
}

// TestIperf3JSONMatchesRealStructure compares our --json-iperf3 document
// with real iperf3 3.12 -J output for the same kind of test: every key we
// print is one iperf3 prints there, and the keys consumers rely on are all
// present. The real output decodes with the same Report types.
func TestIperf3JSONMatchesRealStructure(t *testing.T) {
	for _, udp := range []bool{false, true} {
		t.Run("udp="+strconv.FormatBool(udp), func(t *testing.T) {
			t.Parallel()
			// Real iperf3 client against a real server.
			port, report := realIperf3Server(t)
			args := []string{"-c", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "1", "-J"}
			if udp {
				args = append(args, "-u", "-b", "1M", "-l", "200")
			}
			out, err := exec.Command(iperf3Bin(t), args...).Output()
			if err != nil {
				t.Fatalf("iperf3 -c: %v", err)
			}
			report()
			var realRep i3wire.Report
			if err := json.Unmarshal(wrapRe.ReplaceAll(out, []byte("0")), &realRep); err != nil {
				t.Fatalf("real -J does not decode into Report: %v", err)
			}
			// Our client against a real server.
			port2, report2 := realIperf3Server(t)
			cfg := session.ClientConfig{Host: "127.0.0.1", Port: port2, Duration: time.Second, UDP: udp, Length: 200, Rate: units.Rate{Value: 1e6}}
			if !udp {
				cfg.Length, cfg.Rate = 0, units.Rate{}
			}
			gctx, gcancel := context.WithTimeout(context.Background(), guard)
			defer gcancel()
			_, rep, err := RunClient(gctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			report2()
			ours, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			_ = json.Unmarshal(wrapRe.ReplaceAll(out, []byte("0")), &a)
			_ = json.Unmarshal(ours, &b)
			realKeys, ourKeys := map[string]bool{}, map[string]bool{}
			keyPaths(a, "", realKeys)
			keyPaths(b, "", ourKeys)
			for k := range ourKeys {
				if !realKeys[k] && k != ".start.test_start.bidir" {
					t.Errorf("we print %s, iperf3 3.12 does not", k)
				}
			}
			for _, k := range []string{".start.connected", ".start.version", ".start.timestamp.timesecs", ".start.connecting_to.host",
				".start.cookie", ".start.test_start.protocol", ".start.test_start.num_streams", ".intervals[].streams[].bytes",
				".intervals[].sum.bits_per_second", ".end.sum_sent.bytes", ".end.sum_received.bytes", ".end.streams",
				".end.cpu_utilization_percent.remote_total"} {
				if !ourKeys[k] {
					t.Errorf("our document lacks %s", k)
				}
			}
		})
	}
}

// TestIperf3ClientServerEndsTestEarly: a server that ends the test during
// the data phase (SERVER_TERMINATE, as iperf3 sends when it is stopped)
// ends our client's test with an error, promptly: the client once waited
// for a second message from its one-shot control reader and hung.
func TestIperf3ClientServerEndsTestEarly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		ctrl, err := ln.Accept()
		if err != nil {
			return
		}
		defer ctrl.Close()
		c := i3wire.NewConn(ctrl)
		if _, err := c.ReadCookie(ctx); err != nil {
			return
		}
		if c.WriteState(ctx, i3wire.ParamExchange) != nil {
			return
		}
		if _, err := c.ReadParams(ctx); err != nil {
			return
		}
		if c.WriteState(ctx, i3wire.CreateStreams) != nil {
			return
		}
		data, err := ln.Accept()
		if err != nil {
			return
		}
		defer data.Close()
		if _, err := i3wire.NewConn(data).ReadCookie(ctx); err != nil {
			return
		}
		for _, st := range []i3wire.State{i3wire.TestStart, i3wire.TestRunning, i3wire.ServerTerminate} {
			if c.WriteState(ctx, st) != nil {
				return
			}
		}
		<-ctx.Done()
	}()
	type outcome struct {
		r   *result.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := runClient(ctx, session.ClientConfig{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port,
			Dialect: session.DialectIperf3, Duration: 5 * time.Second})
		done <- outcome{r, err}
	}()
	select {
	case o := <-done:
		if o.err == nil && (o.r == nil || o.r.Error == "") {
			t.Errorf("the server ended the test, but the client reported no error: %+v", o.r)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the client did not return within 15 s after the server ended the test")
	}
}
