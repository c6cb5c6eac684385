package lab_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/units"
)

// guard bounds every wait; a test reaching it has hung.
const guard = 30 * time.Second

// startServer runs an in-process wirebench server on 127.0.0.1 and returns
// its port and its finished results.
func startServer(t *testing.T) (int, <-chan *result.Result) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	results := make(chan *result.Result, 8)
	srv, err := iperf2.Listen(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1, IdleTimeout: 2 * time.Second,
		OnResult: func(_ int, r *result.Result) { results <- r }})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.Port(), results
}

// relayRun is a relay running in a goroutine until stop is called.
type relayRun struct {
	r      *lab.Relay
	cancel context.CancelFunc
	done   chan lab.Report
}

// startRelay runs a relay from 127.0.0.1 (any port) to port with the model
// spec; opts adjust its configuration.
func startRelay(t *testing.T, port int, spec string, opts ...func(*lab.RelayConfig)) *relayRun {
	t.Helper()
	sp, err := model.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*guard)
	cfg := lab.RelayConfig{Listen: "127.0.0.1:0", To: fmt.Sprintf("127.0.0.1:%d", port), Model: sp, ModelText: spec}
	for _, o := range opts {
		o(&cfg)
	}
	r, err := lab.NewRelay(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	rr := &relayRun{r: r, cancel: cancel, done: make(chan lab.Report, 1)}
	go func() {
		rep, err := r.Run(ctx)
		if err != nil {
			t.Errorf("relay: %v", err)
		}
		rr.done <- rep
	}()
	t.Cleanup(func() { rr.stop(t) })
	return rr
}

func (rr *relayRun) stop(t *testing.T) lab.Report {
	t.Helper()
	rr.cancel()
	select {
	case rep, ok := <-rr.done:
		if ok {
			close(rr.done)
		}
		return rep
	case <-time.After(guard):
		t.Fatal("relay did not stop")
		return lab.Report{}
	}
}

// udpTest runs a wirebench UDP client through the relay and returns the
// client's and the server's results.
func udpTest(t *testing.T, rr *relayRun, results <-chan *result.Result, pps float64, length int, d time.Duration) (client, server *result.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d+guard)
	defer cancel()
	client, err := dialect.RunClient(ctx, session.ClientConfig{Host: "127.0.0.1", Port: int(rr.r.Addr().Port()), UDP: true,
		Rate: units.Rate{Value: pps, PPS: true}, Length: length, Duration: d})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	select {
	case server = <-results:
	case <-time.After(guard):
		t.Fatal("no server result")
	}
	if client.Receiver == nil || server.Receiver == nil {
		t.Fatalf("no receiver counts: client %+v, server %+v", client.Receiver, server.Receiver)
	}
	return client, server
}

// TestRelayExactCounts is the first must-show: a 4 s test at 5000
// datagrams/s through loss=1%,reorder=0.5%,dup=0.1%, and the test's own loss,
// out-of-order and duplicate counts equal the relay's data counts exactly,
// for three seeds. The client's counts come from the server's report; its
// duplicates from the wirebench extension after it (iperf2's layout has no
// field for them), so the client's duplicates equal the relay's too (issue
// 19, point 4).
func TestRelayExactCounts(t *testing.T) {
	port, results := startServer(t)
	for _, seed := range []int{7, 11, 23} {
		spec := fmt.Sprintf("loss=1%%,reorder=0.5%%,dup=0.1%%,seed=%d", seed)
		rr := startRelay(t, port, spec)
		client, server := udpTest(t, rr, results, 5000, 1470, 4*time.Second)
		rep := rr.stop(t)
		d := rep.Data
		t.Logf("seed %d: relay data %+v; client lost %d ooo %d dup %d; server dup %d", seed, d,
			client.Receiver.Lost, client.Receiver.OutOfOrder, count(client.Receiver.Duplicates), count(server.Receiver.Duplicates))
		// A sender stalled on a loaded host sends fewer than 20000; half of
		// them is still plenty for every fate to occur.
		if d.In < 10000 || d.Dropped == 0 || d.Reordered == 0 || d.Duplicated == 0 {
			t.Errorf("seed %d: the model did too little to test: %+v", seed, d)
		}
		if client.Receiver.Lost != d.Dropped || client.Receiver.OutOfOrder != d.Reordered || count(client.Receiver.Duplicates) != d.Duplicated ||
			count(server.Receiver.Duplicates) != d.Duplicated {
			t.Errorf("seed %d: client lost %d, out of order %d, duplicates %d, server duplicates %d; relay dropped %d, reordered %d, duplicated %d (server warnings %q, client warnings %q, relay warnings %q)",
				seed, client.Receiver.Lost, client.Receiver.OutOfOrder, count(client.Receiver.Duplicates), count(server.Receiver.Duplicates), d.Dropped, d.Reordered, d.Duplicated,
				server.Warnings, client.Warnings, rep.Warnings)
		}
		if server.Receiver.Lost != d.Dropped || server.Receiver.OutOfOrder != d.Reordered {
			t.Errorf("seed %d: server lost %d, out of order %d", seed, server.Receiver.Lost, server.Receiver.OutOfOrder)
		}
		if d.In != d.Forwarded+d.Dropped || len(rep.Warnings) != 0 {
			t.Errorf("seed %d: in %d != forwarded %d + dropped %d, or warnings %q", seed, d.In, d.Forwarded, d.Dropped, rep.Warnings)
		}
	}
}

// steady runs attempt up to three times until the relay saw the offered
// load arrive without a long stall (no gap between datagrams over 150 ms,
// three quarters of the model's default 200 ms queue): a sender descheduled
// longer than the queue's backlog lasts leaves a rate-limiting stage idle,
// and the figures then describe the host, not the model. It fails when
// every attempt stalled.
func steady(t *testing.T, attempt func() (lab.Report, func())) {
	t.Helper()
	for i := 1; i <= 3; i++ {
		rep, check := attempt()
		if gap := rep.Datagrams.MaxGapMS; gap > 150 {
			t.Logf("attempt %d: the sender stalled for %.0f ms (host contention): the offered load was not steady", i, gap)
			continue
		}
		check()
		return
	}
	t.Fatal("the sender stalled in all three attempts: the host is too loaded to offer a steady load")
}

// TestRelayServiceBufferCliff is seed 002 through the relay: a device that
// serves 5000 buffers/s of 2524 bytes passes about 10000 datagrams/s of
// 1262 bytes (two per buffer) but about 5000/s of 1263.
func TestRelayServiceBufferCliff(t *testing.T) {
	port, results := startServer(t)
	rate := map[int]float64{}
	for _, size := range []int{1262, 1263} {
		steady(t, func() (lab.Report, func()) {
			rr := startRelay(t, port, "service=5000,buffer=2524")
			_, server := udpTest(t, rr, results, 15000, size, 3*time.Second)
			rep := rr.stop(t)
			rate[size] = server.Receiver.PacketsPerSecond
			t.Logf("%d B: server %.0f/s; relay %+v", size, rate[size], rep.Datagrams)
			return rep, func() {
				if len(rep.Warnings) > 0 {
					t.Logf("%d B: relay warnings %q", size, rep.Warnings)
				}
				if rep.Datagrams.DroppedBy["service_queue"] == 0 {
					t.Errorf("%d B: the service queue dropped nothing at 15000/s offered", size)
				}
			}
		})
	}
	if r := rate[1263] / rate[1262]; r < 0.45 || r > 0.55 || math.Abs(rate[1262]-10000) > 1000 {
		t.Errorf("1262 B: %.0f/s, 1263 B: %.0f/s, ratio %.3f; want about 10000 and 5000, ratio 0.45–0.55", rate[1262], rate[1263], r)
	}
}

// TestRelayTick is seed 000 through the relay: at most 7 datagrams per 1 ms
// tick, offered 10000/s of 1470 bytes; the server measures 7000/s within 1 %
// and its timer-tick diagnosis names 7 per 1 ms.
func TestRelayTick(t *testing.T) {
	port, results := startServer(t)
	// The tick pattern is in the arrivals only while the relay (and the
	// server's receive timestamps) run on time: both share this process
	// and two cores, and once under two busy loops the server found no
	// pattern at all. An attempt without a diagnosis is logged and run
	// again, up to three times; every attempt faces the same assertions.
	const tries = 3
	for try := 1; ; try++ {
		var bad []string
		steady(t, func() (lab.Report, func()) {
			rr := startRelay(t, port, "tick=1ms/7")
			client, server := udpTest(t, rr, results, 10000, 1470, 3*time.Second)
			rep := rr.stop(t)
			pps := server.Receiver.PacketsPerSecond
			t.Logf("try %d: server %.0f/s, diagnoses %q, warnings %q; relay %+v", try, pps, server.Diagnoses, server.Warnings, rep.Datagrams)
			return rep, func() {
				if math.Abs(pps-7000) > 70 {
					bad = append(bad, fmt.Sprintf("server measured %.0f datagrams/s, want 7000 within 1 %%", pps))
				}
				diag := strings.Join(server.Diagnoses, "\n")
				if !strings.Contains(diag, "1 ms") || !strings.Contains(diag, "7 ") {
					bad = append(bad, fmt.Sprintf("no timer diagnosis of 7 per 1 ms: %q", server.Diagnoses))
				}
				// The server's diagnosis reaches our client in the wirebench
				// extension of its report (issue 19, point 4).
				if cd := strings.Join(client.Diagnoses, "\n"); !strings.Contains(cd, "the server's arrivals: ") || !strings.Contains(cd, "1 ms") {
					bad = append(bad, fmt.Sprintf("the client did not get the server's diagnosis: %q", client.Diagnoses))
				}
			}
		})
		if len(bad) == 0 {
			return
		}
		if try == tries {
			t.Fatalf("all %d tries missed; the last: %s", tries, strings.Join(bad, "; "))
		}
		t.Logf("try %d missed: %s", try, strings.Join(bad, "; "))
	}
}

// count is a count that may be unknown: -1 when it is (nil).
func count(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestRelayFINDroppedExact (issue 19, point 5): with loss=5% and seeds 7,
// 11 and 23, the client sends just as many data datagrams that the model
// drops its first FIN (the model's fates follow the arrivals, so the count
// is found by running the same model first). The FIN counts as datagram
// |id| everywhere: the client counts the FINs up to the answered one as
// sent, the server counts the dropped ones lost, and the relay counts them
// in data.in and data.dropped, so the client's and the server's lost equal
// data.dropped exactly and the client's sent equals data.in.
func TestRelayFINDroppedExact(t *testing.T) {
	port, results := startServer(t)
	for _, seed := range []int{7, 11, 23} {
		spec := fmt.Sprintf("loss=5%%,seed=%d", seed)
		n := finDroppedAfter(t, spec, 400)
		rr := startRelay(t, port, spec)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second+guard)
		client, err := dialect.RunClient(ctx, session.ClientConfig{Host: "127.0.0.1", Port: int(rr.r.Addr().Port()), UDP: true,
			Rate: units.Rate{Value: 2000, PPS: true}, Length: 1470, Bytes: n * 1470})
		cancel()
		if err != nil {
			t.Fatalf("client: %v", err)
		}
		var server *result.Result
		select {
		case server = <-results:
		case <-time.After(guard):
			t.Fatal("no server result")
		}
		rep := rr.stop(t)
		d := rep.Data
		if client.Receiver == nil || server.Receiver == nil {
			t.Fatalf("seed %d: no receiver counts: client %+v, server %+v", seed, client.Receiver, server.Receiver)
		}
		fins := client.Sender.Packets - n // FINs counted as sent: 1 + those lost before the answered one
		t.Logf("seed %d: client sent %d (%d data, %d FINs), lost %d; server lost %d of %d; relay data %+v",
			seed, client.Sender.Packets, n, fins, client.Receiver.Lost, server.Receiver.Lost, server.Receiver.Total, d)
		if fins < 2 {
			t.Errorf("seed %d: the first FIN was not lost (%d FINs counted): the relay's fates did not follow the model run first (warnings %q)", seed, fins, rep.Warnings)
		}
		if client.Receiver.Lost != d.Dropped || server.Receiver.Lost != d.Dropped || client.Sender.Packets != d.In ||
			server.Receiver.Total != d.In {
			t.Errorf("seed %d: client sent %d lost %d, server lost %d of %d; relay data in %d dropped %d: want sent = total = in, lost = dropped",
				seed, client.Sender.Packets, client.Receiver.Lost, server.Receiver.Lost, server.Receiver.Total, d.In, d.Dropped)
		}
	}
}

// finDroppedAfter runs model spec over arrivals and returns the smallest
// count of data datagrams, at least min, after which the next arrival (the
// first FIN) is dropped.
func finDroppedAfter(t *testing.T, spec string, min int64) int64 {
	t.Helper()
	sp, err := model.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	m := model.New(sp, sp.Seed)
	var dropped []bool
	for i := int64(0); i < 100*min; i++ {
		_, fate, _ := m.Arrive(nil, 0, uint64(i), 1470, true)
		dropped = append(dropped, fate == model.Dropped)
		if i > min && dropped[i] {
			return i
		}
	}
	t.Fatalf("%s: no drop found", spec)
	return 0
}
