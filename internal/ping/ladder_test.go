package ping

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

func TestLadder(t *testing.T) {
	tests := []struct {
		name       string
		mtu        int
		v6         bool
		head, tail []int
		n          int
	}{
		{"ipv4 1500", 1500, false, []int{1472, 1473, 2952, 2953, 4432, 4433}, []int{65112, 65113, 65507}, 89},
		{"ipv6 1500", 1500, true, []int{1452, 1453, 2888, 2889}, []int{65152, 65153, 65527}, 91},
		{"ipv4 9000", 9000, false, []int{8972, 8973, 17944, 17945}, []int{62824, 62825, 65507}, 15},
		{"ipv4 576", 576, false, []int{548, 549, 1096, 1097}, []int{65128, 65129, 65507}, 237},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Ladder(tt.mtu, tt.v6)
			if len(l) != tt.n || !slices.Equal(l[:len(tt.head)], tt.head) || !slices.Equal(l[len(l)-len(tt.tail):], tt.tail) {
				t.Fatalf("Ladder(%d, %v) = %v (%d sizes)", tt.mtu, tt.v6, l, len(l))
			}
			// Each pair straddles a fragment boundary.
			for i := 0; i+1 < len(l)-1; i += 2 {
				a, b := Fragments(l[i], tt.mtu, tt.v6), Fragments(l[i+1], tt.mtu, tt.v6)
				if b != a+1 || l[i+1] != l[i]+1 {
					t.Errorf("%d→%d fragments for %d→%d", a, b, l[i], l[i+1])
				}
			}
		})
	}
	if l := Ladder(20, false); l != nil {
		t.Errorf("Ladder(20) = %v, want nil", l)
	}
	if f := Fragments(65500, 1500, false); f != 45 {
		t.Errorf("65500 bytes over 1500: %d fragments, want 45 (seed 004)", f)
	}
}

func TestSearch(t *testing.T) {
	upTo := func(limit int) TryFunc {
		return func(_ context.Context, size int) Verdict { return Verdict{Answered: size <= limit, Reason: "no reply"} }
	}
	flaky := func(limit int) TryFunc { // loses every other attempt
		n := 0
		return func(_ context.Context, size int) Verdict {
			n++
			return Verdict{Answered: size <= limit && n%2 == 0}
		}
	}
	ladder := ProbeLadder(1500, false)
	tests := []struct {
		name          string
		try           TryFunc
		tries         int
		largest, fail int
	}{
		{"AR1688 answers up to 3000", upTo(3000), 1, 3000, 3001},
		{"answers all", upTo(1 << 20), 1, 65507, 0},
		{"PA1688 answers no fragments", upTo(1472), 3, 1472, 1473},
		{"answers nothing", upTo(-1), 3, -1, 56},
		{"between ladder rungs", upTo(40000), 1, 40000, 40001},
		{"lossy host with retries", flaky(3000), 2, 3000, 3001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Search(context.Background(), ladder, tt.tries, tt.try)
			if r.Largest != tt.largest || r.FirstFailing != tt.fail || r.Incomplete {
				t.Errorf("largest %d first failing %d incomplete %v; want %d, %d", r.Largest, r.FirstFailing, r.Incomplete, tt.largest, tt.fail)
			}
			if len(r.Steps) > len(ladder)+17 { // the ladder plus a bisection of 1480
				t.Errorf("%d steps", len(r.Steps))
			}
		})
	}
	final := 0
	r := Search(context.Background(), ladder, 5, func(_ context.Context, size int) Verdict {
		final++
		return Verdict{Answered: size <= 1472, Final: true, Reason: "needs fragmentation (path MTU 1500)"}
	})
	if r.FirstFailing != 1473 || r.FailReason != "needs fragmentation (path MTU 1500)" || final != 3 {
		t.Errorf("final verdicts: %+v after %d tries, want 3 tries", r, final)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r := Search(ctx, ladder, 1, upTo(3000)); !r.Incomplete {
		t.Errorf("cancelled search not incomplete: %+v", r)
	}
}

func TestSummarize(t *testing.T) {
	ms := func(v ...float64) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x * float64(time.Millisecond))
		}
		return out
	}
	tests := []struct {
		name string
		in   []time.Duration
		want result.PingRTT
	}{
		{"empty", nil, result.PingRTT{}},
		{"one", ms(5), result.PingRTT{Min: ms(5)[0], Avg: ms(5)[0], Max: ms(5)[0], P50: ms(5)[0], P90: ms(5)[0], P99: ms(5)[0]}},
		{"four", ms(4, 1, 3, 2), result.PingRTT{Min: ms(1)[0], Avg: ms(2.5)[0], Max: ms(4)[0], Mdev: 1118034,
			P50: ms(2)[0], P90: ms(4)[0], P99: ms(4)[0]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Summarize(tt.in); got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(100-i) * time.Millisecond
	}
	s := Summarize(hundred)
	if s.P50 != 50*time.Millisecond || s.P90 != 90*time.Millisecond || s.P99 != 99*time.Millisecond {
		t.Errorf("1..100 ms: p50 %v p90 %v p99 %v", s.P50, s.P90, s.P99)
	}
}
