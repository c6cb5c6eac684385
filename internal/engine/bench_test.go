package engine_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/cpuuse"
	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
)

// BenchmarkPacing measures how well SendUDP holds a requested rate over
// loopback, at 0.1, 10 and 100 Mbit/s of 1470-byte datagrams (8.5, 850 and
// 8503 datagrams/s). One op is one datagram, so ns/op is the achieved
// interval between datagrams. Custom metrics:
//
//	rate-err-%      achieved send rate vs requested, from the time each
//	                datagram was handed to the socket: (n−1) intervals
//	                over first-to-last send time
//	rx-rate-err-%   the same from the receiver's kernel timestamps
//	gap-mean-us     mean interval between sends (the request is 1/pps)
//	gap-sd-us       standard deviation of that interval: how evenly spaced
//	                the datagrams leave (0 would be perfect)
//	gap-p99-us      99th percentile of that interval (about twice the
//	                requested interval means some slots were missed and
//	                caught up with a pair sent back to back)
//	rx-gap-sd-us    the same at the receiver (kernel timestamps)
//	max-lag-us      furthest the sender fell behind its schedule
//	lost            datagrams the receiver did not get
//
// The 0.1 Mbit/s case sends only 8.5 datagrams/s, so use a count, e.g.
//
//	go test -run '^$' -bench 'Pacing/rate=0.1' -benchtime 40x ./internal/engine/
//	go test -run '^$' -bench 'Pacing/rate=(10|100)M' -benchtime 3000x ./internal/engine/
//
// A run longer than a minute stops and fails the benchmark rather than
// report a rate it did not finish.
func BenchmarkPacing(b *testing.B) {
	for _, mbps := range []float64{0.1, 10, 100} {
		b.Run(fmt.Sprintf("rate=%gMbps", mbps), func(b *testing.B) { benchPacing(b, mbps*1e6, 1470) })
	}
}

// pacingMaxTime bounds one benchmark run, whatever b.N asks for.
const pacingMaxTime = 60 * time.Second

func benchPacing(b *testing.B, bps float64, size int) {
	ctx, cancel := context.WithTimeout(context.Background(), pacingMaxTime+10*time.Second)
	defer cancel()
	rx, err := udpio.Listen(ctx, "udp4", "127.0.0.1:0", udpio.Options{ReadBuffer: 8 << 20})
	if err != nil {
		b.Fatalf("listening on loopback: %v", err)
	}
	defer rx.Close()
	tx, err := udpio.Dial(ctx, "udp4", rx.LocalAddr().String(), "", udpio.Options{WriteBuffer: 4 << 20})
	if err != nil {
		b.Fatalf("dialing loopback: %v", err)
	}
	defer tx.Close()

	n := b.N
	sendAt := make([]time.Time, n)
	recvAt := make([]time.Time, n)
	got := make(chan int, 1)
	go func() {
		count := 0
		_ = engine.ReceiveUDP(ctx, rx, engine.UDPReceiveConfig{Idle: 2 * time.Second}, func(m *udpio.Message) bool {
			if m.N >= 8 {
				if id := binary.BigEndian.Uint64(m.Buf); id < uint64(n) && recvAt[id].IsZero() {
					recvAt[id] = m.Time
					count++
				}
			}
			return count < n
		})
		got <- count
	}()

	pps := bps / float64(size*8)
	var c stats.Counters
	b.ResetTimer()
	res, err := engine.SendUDP(ctx, tx, engine.UDPSendConfig{
		Template: make([]byte, size),
		Stamp: func(buf []byte, id int64, now time.Time) {
			binary.BigEndian.PutUint64(buf, uint64(id))
			if id < int64(n) {
				sendAt[id] = now
			}
		},
		PPS:      pps,
		Bytes:    int64(n) * int64(size),
		Duration: pacingMaxTime,
	}, &c)
	b.StopTimer()
	if err != nil {
		b.Fatalf("sending: %v", err)
	}
	received := <-got
	if res.Packets < int64(n) {
		b.Fatalf("the %v bound ended the run after %d of %d datagrams: ask for fewer (-benchtime Nx)", pacingMaxTime, res.Packets, n)
	}
	if res.Packets < 2 {
		return // one datagram has no interval to measure
	}
	sent := sendAt[:res.Packets]
	interval := 1 / pps // seconds
	mean, sd := gapStats(sent)
	b.ReportMetric(100*(interval/mean-1), "rate-err-%")
	b.ReportMetric(mean*1e6, "gap-mean-us")
	b.ReportMetric(sd*1e6, "gap-sd-us")
	b.ReportMetric(gapP99(sent)*1e6, "gap-p99-us")
	b.ReportMetric(float64(res.MaxLag.Microseconds()), "max-lag-us")
	b.ReportMetric(float64(int64(n)-int64(received)), "lost")
	if arrived := compact(recvAt); len(arrived) >= 2 {
		rmean, rsd := gapStats(arrived)
		b.ReportMetric(100*(interval/rmean-1), "rx-rate-err-%")
		b.ReportMetric(rsd*1e6, "rx-gap-sd-us")
	}
}

// compact drops the zero times (datagrams that never arrived).
func compact(ts []time.Time) []time.Time {
	out := make([]time.Time, 0, len(ts))
	for _, t := range ts {
		if !t.IsZero() {
			out = append(out, t)
		}
	}
	return out
}

// gapP99 returns the 99th percentile, in seconds, of the intervals
// between consecutive times.
func gapP99(ts []time.Time) float64 {
	gaps := make([]float64, len(ts)-1)
	for i := 1; i < len(ts); i++ {
		gaps[i-1] = ts[i].Sub(ts[i-1]).Seconds()
	}
	slices.Sort(gaps)
	return gaps[min(len(gaps)-1, len(gaps)*99/100)]
}

// gapStats returns the mean and standard deviation, in seconds, of the
// intervals between consecutive times.
func gapStats(ts []time.Time) (mean, sd float64) {
	k := len(ts) - 1
	mean = ts[k].Sub(ts[0]).Seconds() / float64(k)
	var ss float64
	for i := 1; i < len(ts); i++ {
		d := ts[i].Sub(ts[i-1]).Seconds() - mean
		ss += d * d
	}
	return mean, math.Sqrt(ss / float64(k))
}

// BenchmarkUDPPath runs the whole UDP data path over loopback: SendUDP,
// unpaced, into ReceiveUDP counting every datagram, for 18-, 64- and
// 1470-byte datagrams, with plain sendmmsg/recvmmsg and with UDP GSO on send
// and GRO on receive (offload). One op is one datagram; allocs/op is the
// loops' allocations per datagram (the setup's few dozen are spread over
// b.N). Custom metrics: tx-pps and rx-pps, the datagrams per second sent
// and received, and loss-% between them (the receiver shares the CPU with
// the sender, so at full speed some loss is expected: this is a speed
// benchmark, the loss-free rate needs a paced search).
//
//	go test -run '^$' -bench UDPPath -benchmem -benchtime 2000000x ./internal/engine/
func BenchmarkUDPPath(b *testing.B) {
	for _, size := range []int{18, 64, 1470} {
		for _, offload := range []bool{false, true} {
			name := fmt.Sprintf("%d/plain", size)
			if offload {
				name = fmt.Sprintf("%d/offload", size)
			}
			b.Run(name, func(b *testing.B) { benchPath(b, size, offload) })
		}
	}
}

func benchPath(b *testing.B, size int, offload bool) {
	ctx, cancel := context.WithTimeout(context.Background(), pacingMaxTime+10*time.Second)
	defer cancel()
	snd, rcv := loopPair(b, offload)
	if offload && (!snd.Capabilities().GSO || !rcv.Capabilities().GRO) {
		b.Skip("no UDP GSO/GRO")
	}
	n := int64(b.N)
	var got atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = engine.ReceiveUDP(ctx, rcv, engine.UDPReceiveConfig{BufSize: 2048, Batch: 64, Idle: 500 * time.Millisecond},
			func(m *udpio.Message) bool { return got.Add(1) < n })
	}()
	var c stats.Counters
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	res, err := engine.SendUDP(ctx, snd, engine.UDPSendConfig{
		Template: make([]byte, size), Stamp: stampID, Bytes: n * int64(size), Duration: pacingMaxTime,
	}, &c)
	<-done
	b.StopTimer()
	if err != nil {
		b.Fatalf("sending: %v", err)
	}
	if res.Packets < n {
		b.Fatalf("the %v bound ended the run after %d of %d datagrams", pacingMaxTime, res.Packets, n)
	}
	secs := res.End.Sub(res.Start).Seconds()
	b.ReportMetric(float64(res.Packets)/secs, "tx-pps")
	b.ReportMetric(float64(got.Load())/b.Elapsed().Seconds(), "rx-pps")
	b.ReportMetric(100*float64(n-got.Load())/float64(n), "loss-%")
}

// tcpLoopPair is a loopback TCP connection: the dialled and accepted ends.
func tcpLoopPair(tb testing.TB) (dialled, accepted net.Conn) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listening on loopback: %v", err)
	}
	defer ln.Close()
	got := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		got <- c
	}()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatalf("dialing loopback: %v", err)
	}
	a := <-got
	if a == nil {
		tb.Fatal("accept failed")
	}
	tb.Cleanup(func() { d.Close(); a.Close() })
	return d, a
}

// tcpTransfer sends n bytes in writes of size through SendTCP into
// ReceiveTCP on one loopback connection and returns what both counted.
func tcpTransfer(ctx context.Context, tb testing.TB, size int, n int64) (sent, got engine.TCPResult) {
	tb.Helper()
	d, a := tcpLoopPair(tb)
	done := make(chan struct{})
	var rerr error
	go func() {
		defer close(done)
		got, rerr = engine.ReceiveTCP(ctx, a, 128<<10, 10*time.Second, nil, new(stats.Counters))
	}()
	sent, err := engine.SendTCP(ctx, d, engine.TCPSendConfig{Buffer: make([]byte, size), Bytes: n}, new(stats.Counters))
	d.Close()
	<-done
	if err != nil || rerr != nil {
		tb.Fatalf("sending %d bytes: %v; receiving: %v", n, err, rerr)
	}
	return sent, got
}

// BenchmarkTCPLoop runs SendTCP into ReceiveTCP over loopback with the
// default 128 KiB writes and reads, the receiver with an idle timeout as
// the server's. One op is one write; allocs/op is the loops'
// allocations per write, which must be 0 (the setup's are spread over b.N).
// MB/s is the goodput; cpu-s/GB the process's user+system CPU time (both
// ends) per 10^9 bytes, which depends less on other load than MB/s does.
//
//	go test -run '^$' -bench TCPLoop -benchmem -benchtime 20000x ./internal/engine/
func BenchmarkTCPLoop(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const size = 128 << 10
	n := int64(b.N) * size
	b.SetBytes(size)
	b.ReportAllocs()
	cpu0 := cpuuse.Now()
	b.ResetTimer()
	sent, got := tcpTransfer(ctx, b, size, n)
	b.StopTimer()
	if sent.Bytes != n || got.Bytes != n {
		b.Fatalf("sent %d and received %d of %d bytes", sent.Bytes, got.Bytes, n)
	}
	if u, ok := cpuuse.Between(cpu0, cpuuse.Now()); ok {
		b.ReportMetric((u.User+u.System).Seconds()/(float64(n)/1e9), "cpu-s/GB")
	}
}
