package iperf2

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/standin"
)

// Exact accounting (issue 2, "Must show"): a stand-in client drops,
// reorders and repeats datagrams on purpose; our server's lost,
// out_of_order and duplicates must equal what was injected, and the report
// the stand-in parses must carry the same lost and out-of-order counts.

type udpStandinClient func(ctx context.Context, addr string, o standin.UDPClientOptions) (standin.UDPClientResult, error)

func TestExactAccounting(t *testing.T) {
	ts := startServer(t, session.ServerConfig{IdleTimeout: 500 * time.Millisecond})
	const n = 120
	dialects := []struct {
		name    string
		run     udpStandinClient
		first   int64 // first data id
		dialect string
	}{
		{"zperf-new", standin.ZperfNewUDPClient, 1, session.DialectRaw},
		{"iperf-2.0.5", standin.Legacy205UDPClient, 0, session.DialectIperf2Legacy},
		{"zperf-old", standin.ZperfOldUDPClient, 0, session.DialectIperf2Legacy},
	}
	// Plans are written relative to the first id f and the last data id
	// l = f+n-1.
	plans := []struct {
		name               string
		plan               func(f, l int64) standin.Impairment
		lost, ooo, repeats int
	}{
		{"none", func(f, l int64) standin.Impairment { return standin.Impairment{} }, 0, 0, 0},
		{"drop-first", func(f, l int64) standin.Impairment { return standin.Impairment{Drop: []int64{f}} }, 1, 0, 0},
		{"drop-first-two", func(f, l int64) standin.Impairment { return standin.Impairment{Drop: []int64{f, f + 1}} }, 2, 0, 0},
		{"drop-last-before-fin", func(f, l int64) standin.Impairment { return standin.Impairment{Drop: []int64{l}} }, 1, 0, 0},
		{"drop-last-three", func(f, l int64) standin.Impairment { return standin.Impairment{Drop: []int64{l - 2, l - 1, l}} }, 3, 0, 0},
		{"§6.1: drop 10,11 swap 20/21", func(f, l int64) standin.Impairment {
			return standin.Impairment{Drop: []int64{10, 11}, Swap: [][2]int64{{20, 21}}}
		}, 2, 1, 0},
		{"swap-first", func(f, l int64) standin.Impairment { return standin.Impairment{Swap: [][2]int64{{f, f + 1}}} }, 0, 1, 0},
		{"swap-last", func(f, l int64) standin.Impairment { return standin.Impairment{Swap: [][2]int64{{l - 1, l}}} }, 0, 1, 0},
		{"swap-far", func(f, l int64) standin.Impairment { return standin.Impairment{Swap: [][2]int64{{30, 70}}} }, 0, 1, 0},
		{"repeat-first-and-last", func(f, l int64) standin.Impairment { return standin.Impairment{Repeat: []int64{f, l}} }, 0, 0, 2},
		{"mixed", func(f, l int64) standin.Impairment {
			return standin.Impairment{
				Drop:   []int64{f, 15, 16, 17, 90, l},
				Swap:   [][2]int64{{20, 21}, {40, 45}, {60, 61}},
				Repeat: []int64{5, 21, 40, 60, 100},
			}
		}, 6, 3, 5},
	}
	for _, d := range dialects {
		for _, p := range plans {
			t.Run(d.name+"/"+p.name, func(t *testing.T) {
				plan := p.plan(d.first, d.first+n-1)
				c, err := d.run(deadlineCtx(t), ts.addr, standin.UDPClientOptions{Count: n, RateBps: standinRate, Impair: plan})
				if err != nil {
					t.Fatal(err)
				}
				inj := c.Injected
				if len(inj.Dropped) != p.lost || len(inj.Swapped) != p.ooo || len(inj.Repeated) != p.repeats {
					t.Fatalf("the stand-in injected %+v, the plan meant %d/%d/%d", inj, p.lost, p.ooo, p.repeats)
				}
				r := ts.resultFrom(c.Local.String())
				checkUDPServerCounts(t, r, c, d.dialect)
				rv := r.Receiver
				if rv.Lost != int64(p.lost) || rv.OutOfOrder != int64(p.ooo) || dupsOf(rv) != int64(p.repeats) {
					t.Errorf("lost/ooo/dup = %d/%d/%d, want %d/%d/%d", rv.Lost, rv.OutOfOrder, dupsOf(rv), p.lost, p.ooo, p.repeats)
				}
				checkStandinReport(t, c, rv)
				if c.Report != nil && (int64(c.Report.ErrorCnt) != int64(p.lost) || int64(c.Report.OutOrderCnt) != int64(p.ooo)) {
					t.Errorf("%s parsed lost %d, out-of-order %d from our report, want %d, %d",
						c.Dialect, c.Report.ErrorCnt, c.Report.OutOrderCnt, p.lost, p.ooo)
				}
			})
		}
	}
}
