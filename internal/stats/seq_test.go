package stats

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestSeqTrackerExact(t *testing.T) {
	tests := []struct {
		name                string
		first               int64
		ids                 []int64
		lost, ooo, dup, rcv int64
	}{
		{"in order", 1, []int64{1, 2, 3, 4, 5}, 0, 0, 0, 5},
		{"drop two", 1, []int64{1, 2, 5, 6}, 2, 0, 0, 4},
		{"first lost", 1, []int64{2, 3}, 1, 0, 0, 2},
		{"swap", 1, []int64{1, 3, 2, 4}, 0, 1, 0, 4},
		{"dup", 1, []int64{1, 2, 2, 3, 3, 3}, 0, 0, 3, 3},
		{"iperf check: drop 10,11 swap 20/21", 1, iperfCase(), 2, 1, 0, 49},
		{"zero-based", 0, []int64{0, 1, 2, 4}, 1, 0, 0, 4},
		{"zero arrives late", 1, []int64{1, 2, 0, 3}, 0, 1, 0, 4},
		{"late fill then dup of it", 1, []int64{1, 3, 2, 2}, 0, 1, 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSeqTracker(tt.first)
			for _, id := range tt.ids {
				s.Add(id)
			}
			if s.Lost() != tt.lost || s.OutOfOrder() != tt.ooo || s.Duplicates() != tt.dup || s.Received() != tt.rcv {
				t.Errorf("lost/ooo/dup/rcv = %d/%d/%d/%d, want %d/%d/%d/%d",
					s.Lost(), s.OutOfOrder(), s.Duplicates(), s.Received(), tt.lost, tt.ooo, tt.dup, tt.rcv)
			}
			if s.RunningLost() != s.Lost() {
				t.Errorf("running lost %d != lost %d", s.RunningLost(), s.Lost())
			}
		})
	}
}

// iperfCase is wire-protocols.md §1.6's check: ids 1..51, 10 and 11
// dropped, 20 and 21 swapped.
func iperfCase() []int64 {
	var ids []int64
	for i := int64(1); i <= 51; i++ {
		switch i {
		case 10, 11:
			continue
		case 20:
			ids = append(ids, 21, 20)
		case 21:
		default:
			ids = append(ids, i)
		}
	}
	return ids
}

// TestSeqTrackerRandomImpairment drops, repeats and reorders at random
// (within the window) and checks the counts equal what was injected.
func TestSeqTrackerRandomImpairment(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		const n = 20000
		var sent []int64
		dropped, dups := int64(0), int64(0)
		for id := int64(1); id <= n; id++ {
			switch x := r.IntN(100); {
			case x < 3 && id != n:
				dropped++
			case x < 5:
				sent = append(sent, id, id)
				dups++
			default:
				sent = append(sent, id)
			}
		}
		// Swap some disjoint adjacent pairs of distinct ids.
		swaps := int64(0)
		for i := 0; i+1 < len(sent); i += 2 + r.IntN(50) {
			if sent[i] < sent[i+1] && (i+2 >= len(sent) || sent[i+2] > sent[i+1]) && (i == 0 || sent[i-1] < sent[i]) {
				sent[i], sent[i+1] = sent[i+1], sent[i]
				swaps++
			}
		}
		s := NewSeqTracker(1)
		for _, id := range sent {
			s.Add(id)
		}
		if s.Lost() != dropped || s.Duplicates() != dups || s.OutOfOrder() != swaps {
			t.Fatalf("trial %d: lost/dup/ooo = %d/%d/%d, injected %d/%d/%d", trial, s.Lost(), s.Duplicates(), s.OutOfOrder(), dropped, dups, swaps)
		}
	}
}

func TestSeqTrackerTooOld(t *testing.T) {
	s := NewSeqTracker(1)
	s.Add(1)
	s.Add(Window + 10)
	if k := s.Add(2); k != TooOld {
		t.Fatalf("kind = %v, want TooOld", k)
	}
	if s.TooOld() != 1 {
		t.Errorf("TooOld = %d", s.TooOld())
	}
}

func TestJitterSkipsFirstSample(t *testing.T) {
	var j Jitter
	// A 1000 s clock offset must not show up: only differences count.
	off := 1000 * time.Second
	for i := 0; i < 10; i++ {
		j.Add(off)
	}
	if j.Value() != 0 || j.Samples() != 9 {
		t.Fatalf("jitter = %v samples %d, want 0 and 9", j.Value(), j.Samples())
	}
	// Alternating transit 0/1ms: J converges towards 1 ms from below.
	var k Jitter
	for i := 0; i < 200; i++ {
		k.Add(time.Duration(i%2) * time.Millisecond)
	}
	if v := k.Value(); v < 990*time.Microsecond || v > time.Millisecond {
		t.Errorf("jitter = %v, want just under 1ms", v)
	}
}

func TestJitterZeroStamps(t *testing.T) {
	var j Jitter
	now := time.Now()
	j.AddStamped(now, time.Time{})
	j.AddStamped(now, time.Unix(0, 0))
	if j.ZeroStamps() != 2 || j.Samples() != 0 {
		t.Errorf("zero stamps %d samples %d", j.ZeroStamps(), j.Samples())
	}
}

func TestUDPReceiverCountsDistinctBytes(t *testing.T) {
	r := NewUDPReceiver(1)
	now := time.Now()
	for _, id := range []int64{1, 2, 2, 4, 3} {
		r.Datagram(id, 100, now, now)
	}
	r.Publish()
	s := r.C.Snapshot()
	if s.Bytes != 400 || s.Packets != 4 || s.Duplicates != 1 || s.OutOfOrder != 1 || s.Lost != 0 {
		t.Errorf("snapshot %+v", s)
	}
}

func BenchmarkSeqTrackerAdd(b *testing.B) {
	s := NewSeqTracker(1)
	for i := 0; i < b.N; i++ {
		s.Add(int64(i + 1))
	}
}

func TestSeqTrackerMissing(t *testing.T) {
	s := NewSeqTracker(0)
	if s.Missing(0) {
		t.Error("an empty tracker says id 0 is missing")
	}
	for _, id := range []int64{0, 1, 3, 6} {
		s.Add(id)
	}
	for id, want := range map[int64]bool{-1: false, 0: false, 1: false, 2: true, 3: false, 4: true, 5: true, 6: false, 7: false} {
		if got := s.Missing(id); got != want {
			t.Errorf("Missing(%d) = %v, want %v", id, got, want)
		}
	}
	s.Add(2)
	if s.Missing(2) {
		t.Error("id 2 arrived late and is still missing")
	}
}

// TestSeqTrackerMemoryBounded feeds ten million ids, each pair swapped and
// a pair lost every million or so: the id window's memory stays Window
// bits, and the counts are exact.
func TestSeqTrackerMemoryBounded(t *testing.T) {
	tr := NewSeqTracker(1)
	words, c := len(tr.seen), cap(tr.seen)
	const n = 10_000_000
	var lost int64
	for id := int64(1); id <= n; id += 2 {
		if id%1_000_001 == 0 {
			lost += 2
			continue
		}
		tr.Add(id + 1)
		tr.Add(id)
	}
	if len(tr.seen) != words || cap(tr.seen) != c || words != Window/64 {
		t.Fatalf("id window %d words (cap %d) after %d ids, want %d", len(tr.seen), cap(tr.seen), n, Window/64)
	}
	if tr.Received() != n-lost || tr.Lost() != lost || tr.OutOfOrder() != (n-lost)/2 {
		t.Fatalf("received %d lost %d out of order %d, want %d, %d, %d", tr.Received(), tr.Lost(), tr.OutOfOrder(), n-lost, lost, (n-lost)/2)
	}
}
