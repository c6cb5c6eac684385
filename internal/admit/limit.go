package admit

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"sync"
	"time"
)

// Defaults of the per-source limits, chosen never to hinder a lab: a real
// iperf -P 128 or iperf3 -P 128 client (iperf3's own maximum) opens all its
// streams at once, and a matrix or sweep runs test after test from one host.
const (
	// DefaultMaxActive is how many tests one source may have open at once.
	DefaultMaxActive = 256
	// DefaultPerSecond is how many new tests one source may open per
	// second, sustained, after a burst of DefaultMaxActive.
	DefaultPerSecond = 50
	// DefaultMaxSources bounds the table of sources.
	DefaultMaxSources = 16384
)

// Refusals of Limiter.Admit, wrapped with the details.
var (
	// ErrTooManyActive: the source already has its most tests open.
	ErrTooManyActive = errors.New("too many tests open from this source")
	// ErrTooFast: the source opens new tests faster than allowed.
	ErrTooFast = errors.New("new tests from this source come too fast")
	// ErrTableFull: every slot of the source table holds a source with a
	// test open.
	ErrTableFull = errors.New("too many sources have tests open")
)

// LimitConfig configures a Limiter.
type LimitConfig struct {
	// MaxActive is how many tests one source address may have open at
	// once (0 = no limit).
	MaxActive int
	// PerSecond is how many new tests one source address may open per
	// second, sustained (0 = no limit).
	PerSecond float64
	// Burst is how many new tests a source may open at once before
	// PerSecond applies; 0 means MaxActive (at least 1, and at least one
	// second's worth of PerSecond).
	Burst int
	// MaxSources bounds the table (0 = DefaultMaxSources). When it is full,
	// entries that hold nothing a fresh entry would not (no test open,
	// full bucket) are dropped first, then any entry with no test open; a
	// flood of spoofed sources therefore costs a bounded table, and at
	// worst gives an evicted source a fresh burst.
	MaxSources int
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// Limiter enforces per-source limits on tests: how many are open at once,
// and how fast new ones come (a token bucket per source). It is safe for
// concurrent use. A nil *Limiter admits everything.
type Limiter struct {
	cfg LimitConfig

	mu        sync.Mutex
	sources   map[netip.Addr]*source
	lastSweep time.Time
	// evicted counts deletions since the map was last rebuilt: Go's maps
	// do not give back the room deleted entries took, and under a steady
	// churn of new sources the table's memory was seen to keep growing
	// (2 MiB at 16384 sources, 17 MiB after 16 million), so the map is
	// rebuilt after every MaxSources deletions.
	evicted int
}

type source struct {
	active int
	tokens float64
	at     time.Time // when tokens was last brought up to date
}

// NewLimiter returns a Limiter, or nil when cfg limits nothing.
func NewLimiter(cfg LimitConfig) *Limiter {
	if cfg.MaxActive <= 0 && cfg.PerSecond <= 0 {
		return nil
	}
	if cfg.Burst <= 0 {
		cfg.Burst = max(cfg.MaxActive, int(math.Ceil(cfg.PerSecond)), 1)
	}
	if cfg.MaxSources <= 0 {
		cfg.MaxSources = DefaultMaxSources
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Limiter{cfg: cfg, sources: map[netip.Addr]*source{}}
}

// Admit takes a slot for a new test from addr. On success it returns the
// function that gives the slot back when the test ends (safe to call more
// than once); otherwise an error wrapping ErrTooManyActive, ErrTooFast or
// ErrTableFull that says which limit was met.
func (l *Limiter) Admit(addr netip.Addr) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	addr = plain(addr)
	now := l.cfg.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	src := l.sources[addr]
	if src == nil {
		if len(l.sources) >= l.cfg.MaxSources && !l.makeRoomLocked(now) {
			return nil, fmt.Errorf("%w: all %d entries of the source table hold sources with tests open", ErrTableFull, l.cfg.MaxSources)
		}
		src = &source{tokens: float64(l.cfg.Burst), at: now}
		l.sources[addr] = src
	}
	l.refillLocked(src, now)
	if l.cfg.MaxActive > 0 && src.active >= l.cfg.MaxActive {
		return nil, fmt.Errorf("%w: %s has %d tests open (--max-tests-per-source %d)", ErrTooManyActive, addr, src.active, l.cfg.MaxActive)
	}
	if l.cfg.PerSecond > 0 {
		if src.tokens < 1 {
			return nil, fmt.Errorf("%w: %s opened more than %d tests at once or more than %g per second (--max-new-tests-per-second-per-source)", ErrTooFast, addr, l.cfg.Burst, l.cfg.PerSecond)
		}
		src.tokens--
	}
	src.active++
	var once sync.Once
	return func() { once.Do(func() { l.release(src) }) }, nil
}

// release gives back a slot of src. Entries with tests open are never
// evicted, so src is still the table's entry for its address.
func (l *Limiter) release(src *source) {
	l.mu.Lock()
	defer l.mu.Unlock()
	src.active--
}

// refillLocked brings src's bucket up to now.
func (l *Limiter) refillLocked(src *source, now time.Time) {
	if l.cfg.PerSecond <= 0 {
		return
	}
	if dt := now.Sub(src.at).Seconds(); dt > 0 {
		src.tokens = min(src.tokens+dt*l.cfg.PerSecond, float64(l.cfg.Burst))
	}
	src.at = now
}

// idle reports whether src holds nothing a fresh entry would not.
func (l *Limiter) idle(src *source, now time.Time) bool {
	if src.active > 0 {
		return false
	}
	l.refillLocked(src, now)
	return l.cfg.PerSecond <= 0 || src.tokens >= float64(l.cfg.Burst)
}

// makeRoomLocked frees at least one entry of a full table: every idle one
// (at most once a second, as it walks the whole table), else one with no
// test open. It reports whether it freed any.
func (l *Limiter) makeRoomLocked(now time.Time) bool {
	defer l.compactLocked()
	n := len(l.sources)
	if now.Sub(l.lastSweep) >= time.Second {
		l.lastSweep = now
		for a, src := range l.sources {
			if l.idle(src, now) {
				delete(l.sources, a)
			}
		}
		if len(l.sources) < n {
			l.evicted += n - len(l.sources)
			return true
		}
	}
	// Map order is unspecified, so which one goes is not predictable by
	// a sender.
	for a, src := range l.sources {
		if src.active == 0 {
			delete(l.sources, a)
			l.evicted++
			return true
		}
	}
	return false
}

// compactLocked rebuilds the map once MaxSources entries were deleted
// from it, so that its memory stays bounded.
func (l *Limiter) compactLocked() {
	if l.evicted < l.cfg.MaxSources {
		return
	}
	m := make(map[netip.Addr]*source, l.cfg.MaxSources)
	for a, src := range l.sources {
		m[a] = src
	}
	l.sources, l.evicted = m, 0
}

// Len returns how many sources the table holds.
func (l *Limiter) Len() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sources)
}

// Active returns how many tests addr has open.
func (l *Limiter) Active(addr netip.Addr) int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if src := l.sources[plain(addr)]; src != nil {
		return src.active
	}
	return 0
}
