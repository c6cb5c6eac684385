package reflectrun

import (
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/udpio"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// TestReturnsMemoryBounded feeds a run two million datagrams back, every
// 1000th lost and every 700th back twice, with round trips of 100 to
// 199 µs: the counts and the round-trip extremes are exact, and the id
// window, the sample and the tick window keep the size they had after the
// first SampleSize datagrams.
func TestReturnsMemoryBounded(t *testing.T) {
	const length, n = 64, 2_000_000
	var res Result
	rx := newReturns(&res, length)
	b := make([]byte, length)
	base := time.Unix(1_700_000_000, 0)
	var lost, dups int64
	var capAt [2]int
	for id := int64(1); id <= n; id++ {
		if id%1000 == 500 {
			lost++
			continue
		}
		sent := base.Add(time.Duration(id) * time.Microsecond)
		i2wire.PutDatagram(b, reflectLayout, id, sent)
		m := &udpio.Message{Buf: b, N: length, Time: sent.Add(time.Duration(100+id%100) * time.Microsecond)}
		rx.take(m)
		if id%700 == 0 {
			rx.take(m)
			dups++
		}
		if id == SampleSize {
			capAt = [2]int{rx.sample.Cap(), rx.ticks.Cap()}
		}
	}
	rx.sent(n, n)
	rx.finish()
	if res.Received != n-lost || res.Duplicates != dups || res.TooOld != 0 {
		t.Fatalf("received %d, duplicates %d, too old %d; want %d, %d, 0", res.Received, res.Duplicates, res.TooOld, n-lost, dups)
	}
	if res.RTT.Count != n-lost || res.RTT.Min != 0.1 || res.RTT.Max != 0.199 {
		t.Fatalf("round trips: %d, %.3f to %.3f ms; want %d, 0.100 to 0.199", res.RTT.Count, res.RTT.Min, res.RTT.Max, n-lost)
	}
	if capAt != [2]int{SampleSize, TickWindow} || rx.sample.Cap() != SampleSize || rx.ticks.Cap() != TickWindow {
		t.Fatalf("sample and tick window: cap %v after %d datagrams, %d and %d after %d; want %d and %d",
			capAt, SampleSize, rx.sample.Cap(), rx.ticks.Cap(), n, SampleSize, TickWindow)
	}
	if len(res.RTTs) > SampleSize || len(res.RTTs) != len(res.Arrivals) || res.SampleStep != 16 || len(res.TickArrivals) != TickWindow {
		t.Fatalf("sample of %d (%d arrivals) every %d, %d tick arrivals; want at most %d every 16, and %d",
			len(res.RTTs), len(res.Arrivals), res.SampleStep, len(res.TickArrivals), SampleSize, TickWindow)
	}
	if res.TickCovers == "" {
		t.Fatal("the tick window does not say it holds only the last arrivals")
	}
}
