package iperf2

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2/udpstream"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
	"github.com/wirebench/wirebench/internal/units"
)

// wrapBase starts every stream's ids 10 below 2^31 (udpstream's seam), so
// that a test of a few dozen datagrams crosses the point where a 32-bit id
// turns negative, which read alone is a FIN.
const wrapBase = 1<<31 - 10

// wrapSent is how many data datagrams each stream of the wrap tests sends.
const wrapSent = 40

// TestIDsAcrossTheWrapBetweenWirebenches runs our client against our
// server over loopback with ids starting just below 2^31, forward, -R, -r
// and -d, with datagrams too short for the client header (18 bytes: ids
// of 32 bits, extended across the wrap) and long ones (1470 bytes: the
// header asks for 64-bit ids forward and back, and the connect-back's
// header does too; in 2.0.5's layout it has none and is extended). -r
// and -d with 18 bytes are refused: the
// datagrams cannot carry the header that asks for them. Every stream must count exactly what
// was sent, nothing lost and nothing late, and end at its FIN, not at the
// first id past 2^31.
func TestIDsAcrossTheWrapBetweenWirebenches(t *testing.T) {
	udpstream.SetTestIDBase(wrapBase)
	t.Cleanup(func() { udpstream.SetTestIDBase(0) })
	for _, length := range []int{18, 76, 1470} {
		for _, mode := range []string{"forward", "-R", "-r", "-d"} {
			t.Run(fmt.Sprintf("%s/%dB", mode, length), func(t *testing.T) { runWrapTest(t, session.DialectIperf2, mode, length) })
		}
	}
	// iperf 2.0.5's layout: 32-bit ids from 0, forward and connected back.
	for _, mode := range []string{"forward", "-r", "-d"} {
		t.Run("legacy/"+mode, func(t *testing.T) { runWrapTest(t, session.DialectIperf2Legacy, mode, 1470) })
	}
}

func runWrapTest(t *testing.T, dialect, mode string, length int) {
	runWrapTestAt(t, wrapBase, dialect, mode, length)
}

// runWrapTestAt runs one test with every stream's ids starting base above
// their first (udpstream.SetTestIDBase, which the caller set).
func runWrapTestAt(t *testing.T, base int64, dialect, mode string, length int) {
	ts := startServer(t, session.ServerConfig{})
	host, port, _ := net.SplitHostPort(ts.addr)
	cfg := session.ClientConfig{Host: host, Dialect: dialect, UDP: true, Length: length,
		Bytes: wrapSent * int64(length), Rate: units.Rate{Value: 2000, PPS: true},
		Reverse: mode == "-R", Tradeoff: mode == "-r", Dual: mode == "-d"}
	cfg.Port, _ = strconv.Atoi(port)
	if cfg.Tradeoff || cfg.Dual {
		cfg.ListenPort = loopback.FreePort(t)
	}
	r, err := RunClient(deadlineCtx(t), cfg)
	if (cfg.Tradeoff || cfg.Dual) && length < 76 {
		// 18 bytes cut the header that asks for the connect-back: the
		// server could never know; refused before anything is sent.
		if !session.IsConfigError(err) || !strings.Contains(err.Error(), "-l of at least 76") {
			t.Fatalf("%s with %d-byte datagrams: got %v, want the usage error naming -l", mode, length, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if r.Error != "" {
		t.Fatalf("client: %s", r.Error)
	}
	srv := ts.waitResults(1)[0]
	ts.waitIdle()
	if srv.Error != "" {
		t.Fatalf("server: %s", srv.Error)
	}
	if mode != "-R" { // our stream to the server, counted there
		// iperf 2.0.5's ids start at 0: its highest is one lower.
		top := base + r.Sender.Packets
		if dialect == session.DialectIperf2Legacy {
			top--
		}
		checkWrapCounts(t, "server's count of our stream", srv.Receiver, r.Sender, top)
		if rr := r.Receiver; rr == nil || rr.Lost != 0 || rr.Total != top {
			t.Errorf("the server's report, as we read it: %+v; want total %d, none lost", rr, top)
		}
	}
	switch mode {
	case "-R":
		checkWrapCounts(t, "our count of the server's -R stream", r.Receiver, srv.Sender, base+srv.Sender.Packets)
	case "-r", "-d":
		if r.Reverse == nil || srv.Reverse == nil {
			t.Fatalf("no connect-back flow: ours %+v, the server's %+v", r.Reverse, srv.Reverse)
		}
		checkWrapCounts(t, "our count of the server's connect-back", r.Reverse.Receiver, srv.Reverse.Sender, base+srv.Reverse.Sender.Packets)
	}
	for _, w := range append(append([]string(nil), r.Warnings...), srv.Warnings...) {
		if strings.Contains(w, "after the FIN") || strings.Contains(w, "did not finish") || strings.Contains(w, "no report") {
			t.Errorf("warning: %s", w)
		}
	}
}

// checkWrapCounts holds the receiver rc of a stream to its sender sd: the
// sender's datagrams (its FIN among them) all received, in order, none
// lost, and more than the 10 ids below 2^31, so that the count crossed it;
// the highest id is top.
func checkWrapCounts(t *testing.T, what string, rc *result.Receiver, sd *result.Sender, top int64) {
	t.Helper()
	if rc == nil || sd == nil {
		t.Fatalf("%s: receiver %+v, sender %+v", what, rc, sd)
	}
	if sd.Packets < 12 {
		t.Fatalf("%s: the sender sent %d datagrams, too few to cross 2^31", what, sd.Packets)
	}
	if rc.Packets != sd.Packets || rc.Lost != 0 || rc.OutOfOrder != 0 {
		t.Errorf("%s: received %d, lost %d, out of order %d; the sender sent %d (its FIN among them)",
			what, rc.Packets, rc.Lost, rc.OutOfOrder, sd.Packets)
	}
	if rc.Total != top {
		t.Errorf("%s: highest id %d, want %d (%d sent)", what, rc.Total, top, sd.Packets)
	}
}

// TestConnectBackIDsWherever runs -r and -d between our client and server
// with ids starting where a 32-bit reading of them goes wrong, every
// direction counted exactly and ended by its FIN:
//
//   - the FIN just below 2^31 (its bits, read as data, are an id a few
//     ahead) and in (2^30, 2^31) (an id far ahead): both were taken for
//     data, and the connect-back ran to its deadline;
//   - past 2^32 (1470 bytes only): the streams' ids must be read as the
//     64-bit ones they are, as the header of our client's datagrams asks
//     and now that of the server's connect-back too; a 32-bit reading of
//     its first datagram cannot know how many wraps came before.
//
// Forward and -R, which have a header asking for 64-bit ids or (18 bytes)
// none, run at the same ids. iperf 2.0.5's layout, 32 bits both ways, runs
// below 2^32.
func TestConnectBackIDsWherever(t *testing.T) {
	finBelow := int64(1<<31 - wrapSent - 4)
	bases := []int64{finBelow, 3 << 29, 5<<31 - 10}
	for _, base := range bases {
		for _, length := range []int{18, 1470} {
			for _, mode := range []string{"forward", "-R", "-r", "-d"} {
				if length < 76 && (mode == "-r" || mode == "-d" || base > 1<<32 && mode == "forward") {
					continue // -r/-d refused (TestIDsAcrossTheWrapBetweenWirebenches); 32-bit ids from past 2^32
				}
				t.Run(fmt.Sprintf("%#x/%s/%dB", base, mode, length), func(t *testing.T) {
					udpstream.SetTestIDBase(base)
					t.Cleanup(func() { udpstream.SetTestIDBase(0) })
					runWrapTestAt(t, base, session.DialectIperf2, mode, length)
				})
			}
		}
		if base > 1<<32 {
			continue
		}
		for _, mode := range []string{"-r", "-d"} {
			t.Run(fmt.Sprintf("%#x/legacy/%s", base, mode), func(t *testing.T) {
				udpstream.SetTestIDBase(base)
				t.Cleanup(func() { udpstream.SetTestIDBase(0) })
				runWrapTestAt(t, base, session.DialectIperf2Legacy, mode, 1470)
			})
		}
	}
}
