package model

import (
	"math"
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, s string) Spec {
	t.Helper()
	sp, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return sp
}

func TestParseGood(t *testing.T) {
	sp := mustParse(t, "loss=1%,reorder=0.5%,dup=0.1%,corrupt=0.01%,delay=20ms,jitter=2ms,seed=7")
	if sp.Loss != 0.01 || sp.Reorder != 0.005 || sp.Dup != 0.001 || math.Abs(sp.Corrupt-0.0001) > 1e-12 ||
		sp.Delay != 20*time.Millisecond || sp.Jitter != 2*time.Millisecond || sp.Seed != 7 || !sp.HasSeed {
		t.Errorf("parsed %+v", sp)
	}
	sp = mustParse(t, "service=5000,buffer=2524,per-buffer=2")
	if sp.Service != 5000 || sp.Buffer != 2524 || sp.PerBuffer != 2 {
		t.Errorf("parsed %+v", sp)
	}
	sp = mustParse(t, "tick=1ms/7,max=3000")
	if sp.TickPeriod != time.Millisecond || sp.TickBudget != 7 || sp.Max != 3000 {
		t.Errorf("parsed %+v", sp)
	}
	sp = mustParse(t, "rate=100mbit,overhead=usb-eem,queue=5ms")
	if sp.Rate != 100e6 || sp.Overhead.Name != "usb2-eem" || sp.QueueTime != 5*time.Millisecond {
		t.Errorf("parsed %+v", sp)
	}
	sp = mustParse(t, "rate=10M,queue=32K,burst=1000/10/50%")
	if sp.Rate != 10e6 || sp.OverheadName != "ethernet" || sp.QueueBytes != 32*1024 || *sp.Burst != (Burst{1000, 10, 0.5}) {
		t.Errorf("parsed %+v", sp)
	}
	if sp := mustParse(t, ""); !sp.Empty() {
		t.Errorf("empty model not empty: %+v", sp)
	}
}

func TestParseBad(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"loss=2", "percentage"},
		{"loss=101%", "percentage"},
		{"tick=7", "PERIOD/COUNT"},
		{"tick=1ms/0", "COUNT"},
		{"service=5000,buffer=-1", "above 0"},
		{"buffer=2524", "need service="},
		{"colour=red", "unknown key"},
		{"loss", "key=value"},
		{"loss=1%,loss=2%", "twice"},
		{"delay=1ms,jitter=2ms", "exceeds"},
		{"rate=fast", "bit rate"},
		{"rate=10M,overhead=token-ring", "medium"},
		{"burst=10/1", "GOOD/BAD/LOSS"},
		{"reorder=60%,dup=50%", "exceed"},
		{"seed=-1", "whole number"},
	} {
		_, err := Parse(c.in)
		if err == nil {
			t.Errorf("Parse(%q) accepted", c.in)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("Parse(%q) = %q, want one line mentioning %q", c.in, msg, c.want)
		}
	}
}

// output replays releases in order and returns, per handle, how often it
// was sent and how many were sent after a higher handle.
type output struct {
	sent      map[uint64]int
	reordered int
	maxH      uint64
	last      time.Duration
	backwards int
	corrupt   int
}

func newOutput() *output { return &output{sent: map[uint64]int{}} }

func (o *output) take(rs []Release) {
	for _, r := range rs {
		if r.At < o.last {
			o.backwards++
		}
		o.last = r.At
		if r.H < o.maxH && o.sent[r.H] == 0 {
			o.reordered++
		}
		o.maxH = max(o.maxH, r.H)
		o.sent[r.H] += r.Copies
		if r.Corrupt {
			o.corrupt++
		}
	}
}

// run feeds n datagrams of size bytes at pps from time 0, with handles 1…n,
// and returns the fates counted and the output.
func run(m *Model, n int, pps float64, size int) (map[Fate]int, map[Reason]int, *output) {
	fates, reasons, out := map[Fate]int{}, map[Reason]int{}, newOutput()
	var buf []Release
	for i := 1; i <= n; i++ {
		now := time.Duration(float64(i-1) / pps * float64(time.Second))
		buf = m.Expire(buf[:0], now)
		var f Fate
		var r Reason
		buf, f, r = m.Arrive(buf, now, uint64(i), size, true)
		fates[f]++
		reasons[r]++
		out.take(buf)
	}
	out.take(m.Flush(buf[:0], time.Hour))
	return fates, reasons, out
}

func TestEachDatagramOneFate(t *testing.T) {
	sp := mustParse(t, "loss=1%,reorder=0.5%,dup=0.1%,corrupt=0.2%,seed=7")
	const n = 200000
	fates, _, out := run(New(sp, sp.Seed), n, 5000, 1470)
	total := 0
	for _, c := range fates {
		total += c
	}
	if total != n {
		t.Fatalf("fates add to %d, want %d", total, n)
	}
	delivered, twice := 0, 0
	for _, c := range out.sent {
		delivered++
		if c == 2 {
			twice++
		} else if c != 1 {
			t.Fatalf("a datagram was sent %d times", c)
		}
	}
	if delivered != n-fates[Dropped] {
		t.Errorf("delivered %d, want %d - %d dropped", delivered, n, fates[Dropped])
	}
	if twice != fates[Duplicated] || out.reordered != fates[Reordered] || out.corrupt != fates[Corrupted] {
		t.Errorf("output: %d twice, %d reordered, %d corrupt; fates %v", twice, out.reordered, out.corrupt, fates)
	}
	if out.backwards != 0 {
		t.Errorf("%d releases went back in time", out.backwards)
	}
	near := func(name string, got int, p float64) {
		want := p * n
		if math.Abs(float64(got)-want) > 5*math.Sqrt(want) {
			t.Errorf("%s: %d, want about %.0f", name, got, want)
		}
	}
	near("dropped", fates[Dropped], 0.01)
	near("reordered", fates[Reordered], 0.99*0.005)
	near("duplicated", fates[Duplicated], 0.99*0.001)
	near("corrupted", fates[Corrupted], 0.99*0.002)

	// The same seed gives the same fates; another seed does not.
	again, _, _ := run(New(sp, 7), n, 5000, 1470)
	other, _, _ := run(New(sp, 8), n, 5000, 1470)
	if !equalFates(fates, again) || equalFates(fates, other) {
		t.Errorf("seed 7: %v, again %v, seed 8: %v", fates, again, other)
	}
}

func equalFates(a, b map[Fate]int) bool {
	for f := Forwarded; f <= Corrupted; f++ {
		if a[f] != b[f] {
			return false
		}
	}
	return true
}

func TestReorderHeldBehindNextDatagrams(t *testing.T) {
	m := New(mustParse(t, "reorder=100%"), 1)
	rs, f, _ := m.Arrive(nil, 0, 1, 100, true)
	if f != Reordered || len(rs) != 0 {
		t.Fatalf("first: %v %v", f, rs)
	}
	// A non-data datagram (a FIN) releases it first.
	rs, _, _ = m.Arrive(nil, time.Millisecond, 2, 100, false)
	if len(rs) != 2 || rs[0].H != 1 || rs[1].H != 2 {
		t.Fatalf("FIN did not release the held datagram before itself: %+v", rs)
	}
	// Held ones that nothing follows leave after MaxHold.
	m.Arrive(nil, 2*time.Millisecond, 3, 100, true)
	if at, ok := m.NextExpiry(); !ok || at != 2*time.Millisecond+MaxHold {
		t.Fatalf("NextExpiry = %v %v", at, ok)
	}
	if rs = m.Expire(nil, MaxHold); len(rs) != 0 {
		t.Fatalf("expired early: %+v", rs)
	}
	if rs = m.Expire(nil, 3*time.Millisecond+MaxHold); len(rs) != 1 || rs[0].H != 3 {
		t.Fatalf("not expired: %+v", rs)
	}
}

// rateOut counts the releases in [from, to).
func rateOut(t *testing.T, spec string, pps float64, size int, from, to time.Duration) (int, []Release) {
	t.Helper()
	m := New(mustParse(t, spec), 1)
	var all []Release
	n := int(pps * to.Seconds())
	for i := range n {
		now := time.Duration(float64(i) / pps * float64(time.Second))
		all, _, _ = m.Arrive(all, now, uint64(i+1), size, true)
	}
	c := 0
	for _, r := range all {
		if r.At >= from && r.At < to {
			c++
		}
	}
	return c, all
}

// TestServiceBufferCliff is seed 002: a device serving 5000 buffers/s of
// 2524 bytes passes two 1262-byte datagrams per buffer but one of 1263.
func TestServiceBufferCliff(t *testing.T) {
	const spec = "service=5000,buffer=2524"
	at1262, _ := rateOut(t, spec, 15000, 1262, time.Second, 3*time.Second)
	at1263, _ := rateOut(t, spec, 15000, 1263, time.Second, 3*time.Second)
	if math.Abs(float64(at1262)/2-10000) > 20 || math.Abs(float64(at1263)/2-5000) > 10 {
		t.Errorf("1262 B: %d/s, 1263 B: %d/s; want 10000 and 5000", at1262/2, at1263/2)
	}
	// Below the cliff's rate nothing is lost.
	if n, _ := rateOut(t, spec, 4000, 1263, 0, 2*time.Second); n < 7990 {
		t.Errorf("4000/s of 1263 B: %d of 8000 passed", n)
	}
	// per-buffer caps the packing; a datagram over the buffer takes several.
	if n, _ := rateOut(t, "service=5000,buffer=4000,per-buffer=1", 15000, 100, time.Second, 2*time.Second); n != 5000 {
		t.Errorf("per-buffer=1: %d/s, want 5000", n)
	}
	if n, _ := rateOut(t, "service=5000,buffer=1000", 15000, 2500, time.Second, 2*time.Second); math.Abs(float64(n)-5000.0/3) > 2 {
		t.Errorf("2500 B in 1000 B buffers: %d/s, want 1667", n)
	}
}

func TestTickBudget(t *testing.T) {
	n, rs := rateOut(t, "tick=1ms/7", 10000, 1470, time.Second, 2*time.Second)
	if n != 7000 {
		t.Errorf("%d/s, want 7000", n)
	}
	per := map[time.Duration]int{}
	for _, r := range rs {
		if r.At%time.Millisecond != 0 {
			t.Fatalf("release at %v, not on a tick", r.At)
		}
		per[r.At]++
	}
	for at, c := range per {
		if c > 7 {
			t.Fatalf("%d datagrams at %v", c, at)
		}
	}
	// The budget is per elapsed tick: 70 datagrams at once leave 7 per tick
	// over the next 10 ticks, whenever the caller comes to send them.
	m := New(mustParse(t, "tick=1ms/7,queue=1M"), 1)
	var out []Release
	for i := range 70 {
		out, _, _ = m.Arrive(out, 0, uint64(i), 1470, true)
	}
	if len(out) != 70 || out[0].At != time.Millisecond || out[69].At != 10*time.Millisecond || out[62].At != 9*time.Millisecond {
		t.Errorf("70 at once: first at %v, 63rd at %v, last at %v", out[0].At, out[62].At, out[69].At)
	}
}

func TestRateQueue(t *testing.T) {
	// 100 Mbit/s Ethernet: 1470 B take 1536 B of wire, 8138 datagrams/s.
	n, rs := rateOut(t, "rate=100mbit,overhead=ethernet", 10000, 1470, time.Second, 2*time.Second)
	if math.Abs(float64(n)-8138) > 1 {
		t.Errorf("%d/s, want 8138", n)
	}
	if gap := rs[1].At - rs[0].At; gap != 122880*time.Nanosecond {
		t.Errorf("gap %v, want 122.88µs", gap)
	}
	// A 5 ms queue holds at most 5 ms of waiting.
	_, rs = rateOut(t, "rate=100mbit,queue=5ms", 10000, 1470, 0, time.Second)
	for i, r := range rs {
		if arrival := time.Duration(float64(r.H-1) / 10000 * float64(time.Second)); r.At-arrival > 5*time.Millisecond {
			t.Fatalf("release %d waited %v", i, r.At-arrival)
		}
	}
	// A custom overhead: 28 B of headers and 0 B of framing at 1 Mbit/s.
	if _, rs = rateOut(t, "rate=1mbit,overhead=0", 100, 972, 0, time.Second); rs[0].At != 8*time.Millisecond {
		t.Errorf("1000 B at 1 Mbit/s took %v", rs[0].At)
	}
}

func TestDelayJitterMax(t *testing.T) {
	_, rs := rateOut(t, "delay=20ms,jitter=2ms", 1000, 100, 0, time.Second)
	spread := map[bool]bool{}
	for i, r := range rs {
		d := r.At - time.Duration(r.H-1)*time.Millisecond
		if d < 18*time.Millisecond || d > 22*time.Millisecond || (i > 0 && r.At < rs[i-1].At) {
			t.Fatalf("release %d: delay %v", i, d)
		}
		spread[d > 20*time.Millisecond] = true
	}
	if len(rs) != 1000 || !spread[true] || !spread[false] {
		t.Errorf("%d releases, jitter both ways %v", len(rs), spread)
	}
	m := New(mustParse(t, "max=3000"), 1)
	if _, f, r := m.Arrive(nil, 0, 1, 3001, true); f != Dropped || r != ByMax {
		t.Errorf("3001 B: %v %v", f, r)
	}
	if rs, f, _ := m.Arrive(nil, 0, 2, 3000, true); f != Forwarded || len(rs) != 1 {
		t.Errorf("3000 B: %v %v", f, rs)
	}
}

func TestGilbertElliott(t *testing.T) {
	sp := mustParse(t, "burst=100/10/100%")
	const n = 500000
	m := New(sp, 3)
	lost, runs, prev := 0, 0, false
	for i := range n {
		_, f, _ := m.Arrive(nil, 0, uint64(i), 100, true)
		l := f == Dropped
		if l {
			lost++
			if !prev {
				runs++
			}
		}
		prev = l
	}
	// Stationary bad share 10/110; mean bad run 10 datagrams.
	if share := float64(lost) / n; math.Abs(share-10.0/110) > 0.01 {
		t.Errorf("loss %.4f, want %.4f", share, 10.0/110)
	}
	if mean := float64(lost) / float64(runs); math.Abs(mean-10) > 1 {
		t.Errorf("mean loss run %.2f, want 10", mean)
	}
}
