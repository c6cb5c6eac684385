package iperf2

import (
	"context"
	"fmt"
	"github.com/wirebench/wirebench/internal/session/iperf2/udpstream"
	"net"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/standin"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// startTestRelay runs a relay with model spec in front of to; stop ends it
// and returns its closing report.
func startTestRelay(t *testing.T, to string, spec string) (addr string, stop func() lab.Report) {
	t.Helper()
	sp, err := model.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	r, err := lab.NewRelay(ctx, lab.RelayConfig{Listen: "127.0.0.1:0", To: to, Model: sp, ModelText: spec})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan lab.Report, 1)
	go func() {
		rep, err := r.Run(ctx)
		if err != nil {
			t.Errorf("relay: %v", err)
		}
		done <- rep
	}()
	var once bool
	var rep lab.Report
	stop = func() lab.Report {
		if !once {
			once = true
			cancel()
			rep = <-done
		}
		return rep
	}
	t.Cleanup(func() { stop() })
	return r.Addr().String(), stop
}

// TestClientReadsZperfReceived (issue 19, point 5): the old zperf's report
// carries the datagrams it received where iperf 2's carries the highest id
// (a real zperf 3.4 printed "received packets: 1275", "nb packets lost: 1",
// and our client showed 1274 received). Through a relay that drops 3 % of
// 300 datagrams (seed 7), our client tells from its own sent count that the
// total is "received": its received count equals the stand-in's, and the
// total is received + lost.
func TestClientReadsZperfReceived(t *testing.T) {
	ctx := deadlineCtx(t)
	srv, err := standin.ZperfOldUDPServer(ctx, "127.0.0.1:0", standin.UDPServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := startTestRelay(t, srv.Addr().String(), "loss=3%,seed=7")
	cfg := clientCfg(mustAddr(t, addr), session.DialectIperf2Legacy, true)
	cfg.Rate, cfg.Bytes, cfg.Duration = units.Rate{Value: 3000, PPS: true}, 300*1470, 0
	r, err := runClient(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := srv.Wait()
	if err != nil {
		t.Fatal(err)
	}
	rep := stop()
	rv := receiverOf(t, r)
	t.Logf("stand-in counted %d, report datagrams %d lost %d; client sent %d, received %d, lost %d, total %d (%s); relay data %+v",
		s.Counted, s.Report.Datagrams, s.Report.ErrorCnt, r.Sender.Packets, rv.Packets, rv.Lost, rv.Total, rv.Counting, rep.Data)
	if s.Report.ErrorCnt == 0 {
		t.Fatalf("the relay dropped nothing the stand-in saw: the test shows nothing")
	}
	if rv.Counting != result.CountingReceived || rv.Packets != s.Counted || rv.Lost != int64(s.Report.ErrorCnt) ||
		rv.Total != s.Counted+int64(s.Report.ErrorCnt) {
		t.Errorf("client: %d received, %d lost, total %d (%q); the stand-in received %d and reported %d lost",
			rv.Packets, rv.Lost, rv.Total, rv.Counting, s.Counted, s.Report.ErrorCnt)
	}
}

// TestCountFINs: what a report's total means, from the ids we sent.
func TestCountFINs(t *testing.T) {
	for _, tt := range []struct {
		name           string
		l              iperf2.Layout
		data           int64
		fins           int
		total, lost    int64
		counting       string
		wantFINs       int64
		wantRx, wantTo int64
	}{
		{"2.1: first FIN answered", iperf2.LayoutModern, 100, 3, 101, 2, result.CountingHighestID, 1, 99, 101},
		{"2.1: two FINs lost first", iperf2.LayoutModern, 100, 3, 103, 4, result.CountingHighestID, 3, 99, 103},
		{"zperf received", iperf2.LayoutModern, 100, 1, 98, 1, result.CountingReceived, 1, 98, 99},
		{"2.0.5: FIN -n", iperf2.LayoutLegacy, 100, 2, 100, 0, result.CountingHighestID, 1, 100, 100},
		{"old zperf: received", iperf2.LayoutLegacy, 100, 1, 97, 2, result.CountingReceived, 1, 97, 99},
		{"beyond our FINs: unknown", iperf2.LayoutModern, 100, 1, 500, 0, "", 1, 500, 500},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rr := &result.Receiver{Total: tt.total, Lost: tt.lost, Packets: tt.total - tt.lost}
			fins := udpstream.CountFINs(rr, tt.l, tt.data, tt.fins)
			if fins != tt.wantFINs || rr.Counting != tt.counting || rr.Packets != tt.wantRx || rr.Total != tt.wantTo {
				t.Errorf("FINs %d, counting %q, received %d, total %d; want %d, %q, %d, %d",
					fins, rr.Counting, rr.Packets, rr.Total, tt.wantFINs, tt.counting, tt.wantRx, tt.wantTo)
			}
		})
	}
}

func mustAddr(t *testing.T, s string) net.Addr {
	t.Helper()
	a, err := net.ResolveUDPAddr("udp", s)
	if err != nil {
		t.Fatal(fmt.Errorf("%s: %w", s, err))
	}
	return a
}
