package iperf2

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/standin"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// manyUDPClient is an iperf 2.1-like UDP client from its own loopback
// source address src: count 1470-byte datagrams gap apart, then a FIN,
// re-sent every 10 ms (as iperf 2.1 does) until a server report arrives
// or ctx ends. It returns whether a report arrived. Unlike iperf, it
// never gives up before ctx ends: the test counts outcomes, not how long
// they took.
func manyUDPClient(ctx context.Context, server string, src net.IP, count int64, gap time.Duration) (bool, error) {
	raddr, err := net.ResolveUDPAddr("udp", server)
	if err != nil {
		return false, err
	}
	c, err := net.DialUDP("udp", &net.UDPAddr{IP: src}, raddr)
	if err != nil {
		return false, fmt.Errorf("binding %s: %w", src, err)
	}
	defer c.Close()
	for id := int64(1); id <= count; id++ {
		if _, err := c.Write(modernDatagram(id, 1470, 0)); err != nil {
			return false, err
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-time.After(gap):
		}
	}
	buf := make([]byte, 2048)
	for k := int64(0); ctx.Err() == nil; k++ {
		// Each FIN numbered as iperf 2.1 numbers its re-sends.
		if _, err := c.Write(modernDatagram(-(count + 1 + k), 1470, 0)); err != nil {
			return false, err
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		n, err := c.Read(buf)
		if err != nil {
			continue // no report yet (or ECONNREFUSED): send the FIN again
		}
		if _, _, err := iperf2.ParseServerReport(buf[:n]); err != nil {
			return false, fmt.Errorf("a %d-byte reply that is not a server report: %v", n, err)
		}
		return true, nil
	}
	return false, nil
}

// runUDPClients runs n manyUDPClients at once from 127.0.0.10 up and
// returns how many got their report.
func runUDPClients(t *testing.T, ctx context.Context, server string, n int, count int64, gap time.Duration) int {
	t.Helper()
	var got atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := manyUDPClient(ctx, server, net.IPv4(127, 0, byte(i/200), byte(10+i%200)), count, gap)
			if err != nil {
				errs <- err
			}
			if ok {
				got.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	return int(got.Load())
}

// TestManyUDPClientsResultsStalled: whoever takes the server's results
// (a slow results store, a terminal that is not read) may take as long
// as it likes, and the server must still answer every FIN. All UDP tests
// share one reader goroutine; it used to hand each ended test's result
// on itself, before sending the report of the FIN that ended it, so one
// blocked result stopped every report of the port: with 1000 clients
// (600 UDP) none got its report while the server's socket dropped the
// re-sent FINs. Here every result is held until every client got its
// report (or the generous deadline passed).
func TestManyUDPClientsResultsStalled(t *testing.T) {
	const clients = 40
	gate := make(chan struct{})
	var held atomic.Int64
	cfg := session.ServerConfig{OnResult: func(int, *result.Result) {
		held.Add(1)
		<-gate
	}}
	ts := startServer(t, cfg)
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release) // before the server stops (cleanups run last first)
	ctx, cancel := context.WithTimeout(context.Background(), 3*guard)
	defer cancel()
	got := runUDPClients(t, ctx, ts.addr, clients, 5, 5*time.Millisecond)
	if held.Load() == 0 {
		t.Error("no result reached OnResult: the test proves nothing")
	}
	release()
	if got != clients {
		t.Fatalf("%d of %d UDP clients got their server report while the results were held", got, clients)
	}
	ts.waitResults(clients)
}

// TestManyClientsAtOnce is a scaled version of 1000 clients against one
// server: 200 iperf 2.1-style UDP clients at about 100 kbit/s for 3 s,
// each from its own 127.0.0.N address, and 20 TCP clients, at once, with
// a result consumer that takes its time (2 ms a result, like a results
// store). Every UDP client must get its report, the server must hand on
// a result for every test, and its goroutines must come back to what
// they were before. Nothing here is timed: the clients re-send their
// FINs until answered, and the waits are generous deadlines.
func TestManyClientsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("220 clients for 3 s")
	}
	const udpClients, tcpClients = 200, 20
	ts := startServer(t, session.ServerConfig{OnResult: func(int, *result.Result) { time.Sleep(2 * time.Millisecond) }})
	ctx, cancel := context.WithTimeout(context.Background(), 6*guard)
	defer cancel()
	// One test first, so that every goroutine of the idle server runs.
	if got := runUDPClients(t, ctx, ts.addr, 1, 2, time.Millisecond); got != 1 {
		t.Fatal("the first client got no report")
	}
	ts.waitResults(1)
	idle := runtime.NumGoroutine()

	var tcpDone atomic.Int64
	var wg sync.WaitGroup
	for range tcpClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := standin.ZperfTCPClient(ctx, ts.addr, standin.TCPClientOptions{Bytes: 375_000})
			if err != nil {
				t.Errorf("tcp client: %v", err)
				return
			}
			if c.BytesSent == 375_000 {
				tcpDone.Add(1)
			}
		}()
	}
	// 1470 bytes every 117.6 ms is 100 kbit/s; 26 of them last 3 s.
	got := runUDPClients(t, ctx, ts.addr, udpClients, 26, 117600*time.Microsecond)
	wg.Wait()
	if got != udpClients {
		t.Errorf("%d of %d UDP clients got their server report", got, udpClients)
	}
	if tcpDone.Load() != tcpClients {
		t.Errorf("%d of %d TCP clients sent everything", tcpDone.Load(), tcpClients)
	}
	results := ts.waitResults(1 + udpClients + tcpClients)
	udp := -1 // the first client's
	for _, r := range results {
		if r.Test.Protocol == result.UDP {
			udp++
			if r.Error != "" {
				t.Errorf("udp test from %s: %s", r.Test.Peer, r.Error)
			}
		}
	}
	if udp != udpClients {
		t.Errorf("%d UDP results, want %d", udp, udpClients)
	}
	// Goroutines back to idle: the finished tests hold none (they are
	// kept only as entries, to answer late FINs).
	deadline := time.Now().Add(guard)
	for runtime.NumGoroutine() > idle && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > idle {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines %v after every test ended, %d before the clients:\n%s", n, guard, idle, buf[:runtime.Stack(buf, true)])
	}
}
