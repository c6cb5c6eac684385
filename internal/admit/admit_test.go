package admit

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		addr, class string
	}{
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.0.0.1", "private (RFC 1918)"},
		{"172.16.0.1", "private (RFC 1918)"},
		{"172.31.255.255", "private (RFC 1918)"},
		{"192.168.1.1", "private (RFC 1918)"},
		{"::ffff:192.168.1.1", "private (RFC 1918)"},
		{"100.64.0.1", "shared CGNAT (RFC 6598)"},
		{"100.127.255.255", "shared CGNAT (RFC 6598)"},
		{"169.254.1.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"fd00::1", "unique local (ULA)"},
		{"fc00::1", "unique local (ULA)"},
		{"198.18.0.1", "benchmarking (RFC 2544)"}, // where `wirebench lab up` puts its hosts
		{"198.19.255.255", "benchmarking (RFC 2544)"},
		{"::ffff:198.18.0.1", "benchmarking (RFC 2544)"},
		// Not local.
		{"172.32.0.1", ""},
		{"172.15.255.255", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"198.17.255.255", ""},
		{"198.20.0.0", ""},
		{"8.8.8.8", ""},
		{"2001:db8::1", ""},
		{"fe00::1", ""},
		{"0.0.0.0", ""},
		{"::", ""},
		{"224.0.0.1", ""},
		{"255.255.255.255", ""},
	} {
		if got := Classify(netip.MustParseAddr(c.addr)); got != c.class {
			t.Errorf("Classify(%s) = %q, want %q", c.addr, got, c.class)
		}
	}
}

func TestReverseCheck(t *testing.T) {
	allow, err := ParseAllow([]string{"192.0.2.0/24", "2001:2::/48,203.0.113.7"})
	if err != nil {
		t.Fatal(err)
	}
	r := Reverse{Allow: allow}
	for _, c := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1", true},
		{"10.1.2.3", true},
		{"198.18.0.1", true},
		{"192.0.2.200", true},
		{"::ffff:192.0.2.1", true},
		{"198.20.0.1", false},
		{"2001:2::1", true},
		{"2001:3::1", false},
		{"203.0.113.7", true},
		{"203.0.113.8", false},
		{"::ffff:203.0.113.8", false},
	} {
		err := r.Check(netip.MustParseAddr(c.addr))
		if (err == nil) != c.ok {
			t.Errorf("Check(%s) = %v, want allowed %v", c.addr, err, c.ok)
		}
		if err != nil && (!errors.Is(err, ErrReverseRefused) || !strings.Contains(err.Error(), netip.MustParseAddr(c.addr).Unmap().String())) {
			t.Errorf("Check(%s): %v does not wrap ErrReverseRefused and name the address", c.addr, err)
		}
	}
	// The zero value allows the local networks only.
	if err := (Reverse{}).Check(netip.MustParseAddr("192.0.2.1")); err == nil {
		t.Error("the zero Reverse allowed 192.0.2.1")
	}
	if err := (Reverse{}).Check(netip.MustParseAddr("fd12::1")); err != nil {
		t.Errorf("the zero Reverse refused a ULA source: %v", err)
	}
}

// TestReverseDeny: --deny-reverse refuses a source on a local network and
// one in --allow-reverse alike, naming the flag and the prefix.
func TestReverseDeny(t *testing.T) {
	deny, err := ParseAllow([]string{"198.18.0.1,10.9.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := ParseAllow([]string{"any"})
	r := Reverse{Allow: all, Deny: deny}
	for _, c := range []struct {
		addr string
		ok   bool
	}{
		{"198.18.0.1", false},
		{"::ffff:198.18.0.1", false},
		{"198.18.0.2", true},
		{"10.9.1.1", false},
		{"10.8.1.1", true},
		{"8.8.8.8", true},
	} {
		err := r.Check(netip.MustParseAddr(c.addr))
		if (err == nil) != c.ok {
			t.Errorf("Check(%s) = %v, want allowed %v", c.addr, err, c.ok)
		}
		if err != nil && (!errors.Is(err, ErrReverseRefused) || !strings.Contains(err.Error(), "--deny-reverse")) {
			t.Errorf("Check(%s): %v does not wrap ErrReverseRefused and name --deny-reverse", c.addr, err)
		}
	}
}

func TestParseAllow(t *testing.T) {
	all, err := ParseAllow([]string{"any"})
	if err != nil {
		t.Fatal(err)
	}
	r := Reverse{Allow: all}
	for _, a := range []string{"8.8.8.8", "2001:db8::1", "::ffff:8.8.4.4"} {
		if err := r.Check(netip.MustParseAddr(a)); err != nil {
			t.Errorf("--allow-reverse any refused %s: %v", a, err)
		}
	}
	got, err := ParseAllow([]string{"::ffff:198.18.0.0/111", " 192.0.2.1/24 ", "", "2001:db8::1"})
	if err != nil {
		t.Fatal(err)
	}
	want := "[198.18.0.0/15 192.0.2.0/24 2001:db8::1/128]"
	if fmt.Sprint(got) != want {
		t.Errorf("ParseAllow = %v, want %v", got, want)
	}
	for _, bad := range []string{"198.18.0.0/33", "nonsense", "198.18.0.0/", "::ffff:1.2.3.4/64", "fe80::/10%eth0", "10.0.0.0/8,x"} {
		if _, err := ParseAllow([]string{bad}); err == nil {
			t.Errorf("ParseAllow(%q) accepted it", bad)
		}
	}
}

// fakeClock is a settable clock for the limiter.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func addr(i int) netip.Addr              { return netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}) }
func mustAdmit(t *testing.T, l *Limiter, a netip.Addr) func() {
	t.Helper()
	rel, err := l.Admit(a)
	if err != nil {
		t.Fatalf("Admit(%s): %v", a, err)
	}
	return rel
}

func TestLimiterActive(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l := NewLimiter(LimitConfig{MaxActive: 3, Now: clk.now})
	a := addr(1)
	var rels []func()
	for i := 0; i < 3; i++ {
		rels = append(rels, mustAdmit(t, l, a))
	}
	if _, err := l.Admit(a); !errors.Is(err, ErrTooManyActive) {
		t.Fatalf("4th test from one source: %v, want ErrTooManyActive", err)
	}
	// The mapped form of the same address is the same source.
	if _, err := l.Admit(netip.AddrFrom16(a.As16())); !errors.Is(err, ErrTooManyActive) {
		t.Fatalf("4th test from the mapped address: %v, want ErrTooManyActive", err)
	}
	mustAdmit(t, l, addr(2)) // another source is not affected
	rels[0]()
	rels[0]() // a second release gives nothing back
	mustAdmit(t, l, a)
	if _, err := l.Admit(a); !errors.Is(err, ErrTooManyActive) {
		t.Fatalf("after one release and one admit: %v, want ErrTooManyActive", err)
	}
	if n := l.Active(a); n != 3 {
		t.Errorf("Active = %d, want 3", n)
	}
}

func TestLimiterRate(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l := NewLimiter(LimitConfig{MaxActive: 8, PerSecond: 2, Now: clk.now})
	a := addr(1)
	// A burst of MaxActive (iperf -P 8) is admitted at once.
	for i := 0; i < 8; i++ {
		mustAdmit(t, l, a)()
	}
	if _, err := l.Admit(a); !errors.Is(err, ErrTooFast) {
		t.Fatalf("9th test in the same instant: %v, want ErrTooFast", err)
	}
	clk.add(499 * time.Millisecond)
	if _, err := l.Admit(a); !errors.Is(err, ErrTooFast) {
		t.Fatalf("after 499 ms at 2/s: %v, want ErrTooFast", err)
	}
	clk.add(time.Millisecond)
	mustAdmit(t, l, a)()
	if _, err := l.Admit(a); !errors.Is(err, ErrTooFast) {
		t.Fatalf("a second test after 500 ms: %v, want ErrTooFast", err)
	}
	// Sustained at the rate: one test every 500 ms, forever.
	for i := 0; i < 100; i++ {
		clk.add(500 * time.Millisecond)
		mustAdmit(t, l, a)()
	}
	// The bucket refills to the burst, not beyond.
	clk.add(time.Hour)
	for i := 0; i < 8; i++ {
		mustAdmit(t, l, a)()
	}
	if _, err := l.Admit(a); !errors.Is(err, ErrTooFast) {
		t.Fatalf("after an hour's rest, 9th at once: %v, want ErrTooFast", err)
	}
}

func TestLimiterNil(t *testing.T) {
	l := NewLimiter(LimitConfig{})
	if l != nil {
		t.Fatal("a config with no limits made a limiter")
	}
	for i := 0; i < 10000; i++ {
		rel, err := l.Admit(addr(1))
		if err != nil {
			t.Fatal(err)
		}
		rel()
	}
}

// A flood of spoofed sources keeps the table at its bound, and sources
// with tests open keep their entry (and their count) through it.
func TestLimiterBoundedTable(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l := NewLimiter(LimitConfig{MaxActive: 2, PerSecond: 10, MaxSources: 64, Now: clk.now})
	held := addr(60000)
	mustAdmit(t, l, held)
	mustAdmit(t, l, held)
	for i := 0; i < 5000; i++ {
		if i%100 == 0 {
			clk.add(10 * time.Millisecond)
		}
		mustAdmit(t, l, addr(i))() // each spoofed source's test ends at once
		if n := l.Len(); n > 64 {
			t.Fatalf("table holds %d sources, bound 64", n)
		}
	}
	if _, err := l.Admit(held); !errors.Is(err, ErrTooManyActive) {
		t.Fatalf("the source with 2 tests open lost its count in the flood: %v", err)
	}
	// Sources with tests open are never evicted: a table full of them
	// refuses new sources.
	l2 := NewLimiter(LimitConfig{MaxActive: 1, MaxSources: 4, Now: clk.now})
	for i := 0; i < 4; i++ {
		mustAdmit(t, l2, addr(i))
	}
	if _, err := l2.Admit(addr(99)); !errors.Is(err, ErrTableFull) {
		t.Fatalf("new source with the table full of open tests: %v, want ErrTableFull", err)
	}
}

func TestLimiterDefaultsAllowParallelClients(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l := NewLimiter(LimitConfig{MaxActive: DefaultMaxActive, PerSecond: DefaultPerSecond, Now: clk.now})
	a := netip.MustParseAddr("10.0.0.2")
	// iperf -P 128 -d: 128 streams open at once, plus a matrix of short
	// tests in sequence, 20 a second for a minute.
	var rels []func()
	for i := 0; i < 128; i++ {
		rels = append(rels, mustAdmit(t, l, a))
	}
	for _, r := range rels {
		r()
	}
	for i := 0; i < 1200; i++ {
		clk.add(50 * time.Millisecond)
		mustAdmit(t, l, a)()
	}
}

// The table's memory stays bounded under a steady churn of new sources
// (Go maps keep the room of deleted entries; the limiter rebuilds its map).
func TestLimiterMemoryBounded(t *testing.T) {
	l := NewLimiter(LimitConfig{MaxActive: 4, PerSecond: 1, MaxSources: 1024})
	churn := func(from, to int) uint64 {
		for i := from; i < to; i++ {
			rel, err := l.Admit(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
			if err != nil {
				t.Fatalf("source %d: %v", i, err)
			}
			rel()
		}
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	base := churn(0, 100000)
	after := churn(100000, 2<<20)
	t.Logf("heap in use after 100000 sources: %d KiB; after %d: %d KiB", base/1024, 2<<20, after/1024)
	if l.Len() > 1024 {
		t.Errorf("table holds %d sources, bound 1024", l.Len())
	}
	if after > base+256*1024 {
		t.Errorf("heap grew by %d KiB over %d more sources through a 1024-entry table", (after-base)/1024, 2<<20-100000)
	}
}
