package udpio

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchModes are the paths compared by the benchmarks.
var benchModes = []struct {
	name string
	opt  Options
}{
	{"batch", Options{}},
	{"nobatch", Options{NoBatch: true}},
}

func benchMsgs(n, size int, b *testing.B) []Message {
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i].Buf = make([]byte, size)
	}
	return msgs
}

func benchListen(b *testing.B, opt Options) Conn {
	b.Helper()
	c, err := Listen(b.Context(), "udp4", "127.0.0.1:0", opt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// BenchmarkSend measures datagrams sent per second over loopback. The
// receiving socket is not read: once its buffer is full the kernel drops
// what arrives, so this is the sender's cost plus loopback delivery, with
// no receiver competing for the CPU.
func BenchmarkSend(b *testing.B) {
	modes := append(benchModes, struct {
		name string
		opt  Options
	}{"gso", Options{GSO: true}})
	for _, size := range []int{64, 1470} {
		for _, m := range modes {
			b.Run(fmt.Sprintf("%d/%s", size, m.name), func(b *testing.B) {
				sink := benchListen(b, Options{})
				snd := benchListen(b, m.opt)
				if m.opt.GSO && !snd.Capabilities().GSO {
					b.Skip("no UDP_SEGMENT")
				}
				msgs := benchMsgs(DefaultBatchSize, size, b)
				for i := range msgs {
					msgs[i].Addr = sink.LocalAddr()
				}
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				for sent := 0; sent < b.N; {
					n, err := snd.WriteBatch(msgs[:min(len(msgs), b.N-sent)])
					if err != nil {
						b.Fatal(err)
					}
					sent += n
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pkts/s")
			})
		}
	}
}

// BenchmarkReceive measures datagrams received per second over loopback
// while a goroutine floods the socket with batched GSO sends (bounded in count
// and stopped when the receiver is done). The receiver's buffer is 4 MiB;
// datagrams the receiver cannot keep up with are dropped by the kernel and
// reported as drops/op.
//
// The gro mode reads with UDP_GRO: the flood's GSO super-packets cross
// loopback whole and ReadBatch splits them, one Message per datagram.
func BenchmarkReceive(b *testing.B) {
	modes := append(benchModes, struct {
		name string
		opt  Options
	}{"gro", Options{GRO: true}})
	for _, size := range []int{18, 64, 1470} {
		for _, m := range modes {
			b.Run(fmt.Sprintf("%d/%s", size, m.name), func(b *testing.B) {
				opt := m.opt
				opt.ReadBuffer = 4 << 20
				rcv := benchListen(b, opt)
				if opt.GRO && !rcv.Capabilities().GRO {
					b.Skip("no UDP_GRO")
				}
				stop, wg := flood(b, rcv, size, int64(b.N)*8+1024)
				msgs := benchMsgs(DefaultBatchSize, size, b)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				if err := rcv.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < b.N; {
					n, err := rcv.ReadBatch(msgs[:min(len(msgs), b.N-got)])
					if errors.Is(err, os.ErrDeadlineExceeded) {
						b.Fatalf("flood ended after %d of %d datagrams", got, b.N)
					}
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
				b.StopTimer()
				stop.Store(true)
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pkts/s")
				if d, ok := rcv.Drops(); ok {
					b.ReportMetric(float64(d)/float64(b.N), "drops/op")
				}
			})
		}
	}
}

// flood sends at most limit datagrams to dst from a batching socket (with
// GSO where available, so the sender outruns the receiver) until stop is set.
func flood(b *testing.B, dst Conn, size int, limit int64) (*atomic.Bool, *sync.WaitGroup) {
	snd := benchListen(b, Options{GSO: true})
	msgs := benchMsgs(DefaultBatchSize, size, b)
	for i := range msgs {
		msgs[i].Addr = dst.LocalAddr()
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for sent := int64(0); sent < limit && !stop.Load(); {
			n, err := snd.WriteBatch(msgs)
			if err != nil {
				return
			}
			sent += int64(n)
		}
	})
	return &stop, &wg
}
