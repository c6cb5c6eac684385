package sharedcause

import (
	"fmt"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// Period is how often a server says again a cause that recurs: at most
// one line per cause per period.
const Period = time.Minute

// words are what the tally says of a cause.
type words struct {
	// had completes "N more tests had …" (the count line).
	had string
	// advice says what to do, on the first line.
	advice string
}

var causeWords = [nCauses]words{
	SocketDrops: {
		had: "datagrams dropped by this server's UDP socket (its receive buffer was full; each test counts them as lost, host_drops in its JSON)",
		advice: "this server's reader fell behind its socket: give the server more CPU (--nice, fewer busy processes on this host) or run fewer clients at once; " +
			"while tests overlap, one test's count can include the others' drops",
	},
	CPULimit: {
		had:    "this host's CPU as their limit (their figures measure this host rather than the network)",
		advice: "run fewer tests at once, or the server on a host with cores to spare",
	},
}

// count is the tally of one cause.
type count struct {
	tests  int       // tests that had it, in all
	since  int       // of them, since it was last said
	first  time.Time // when it was first said
	saidAt time.Time // when it was last said
}

// Tally says the shared causes of a server's tests, each once with its
// count: a line when a cause first appears (with the test it appeared in
// and what to do), then, while it recurs, a line with the count of tests it
// hit at most each Period, and one when the tally closes. It is safe for
// concurrent use.
type Tally struct {
	say    func(line string)
	period time.Duration
	// now and after are the clock and the timer (tests set them).
	now   func() time.Time
	after func(d time.Duration, f func()) (stop func() bool)

	mu     sync.Mutex // guards the fields below
	counts [nCauses]count
	stop   func() bool // the armed timer's, nil when none is armed
	closed bool
}

// NewTally says its lines through say (one line each, without a newline),
// again at most each period (Period when 0).
func NewTally(say func(line string), period time.Duration) *Tally {
	if period <= 0 {
		period = Period
	}
	return &Tally{say: say, period: period, now: time.Now,
		after: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }}
}

// Add counts the shared causes that test id's result r says (each once per
// test, however many of its streams say it), saying the lines that are
// due.
func (t *Tally) Add(id int, r *result.Result) {
	var seen [nCauses]bool
	var lines []string
	t.mu.Lock()
	now := t.now()
	for _, w := range r.Warnings {
		c, ok := Of(w)
		if !ok || seen[c] {
			continue
		}
		seen[c] = true
		n := &t.counts[c]
		n.tests++
		if n.tests == 1 {
			n.first, n.saidAt = now, now
			lines = append(lines, fmt.Sprintf("WARNING: server: test %d: %s; %s. Said once: while it recurs, a count of the tests it hits follows at most every %v, and when the server stops",
				id, w, causeWords[c].advice, t.period))
			continue
		}
		n.since++
		if now.Sub(n.saidAt) >= t.period {
			lines = append(lines, t.countLineLocked(c, now))
		}
	}
	t.armLocked(now)
	t.mu.Unlock()
	t.sayAll(lines)
}

// countLineLocked says c's count since it was last said, and marks it
// said at now.
func (t *Tally) countLineLocked(c Cause, now time.Time) string {
	n := &t.counts[c]
	line := fmt.Sprintf("WARNING: server: %s had %s since it was last said (%s ago); %d in all since it was first said (%s ago)",
		plural(n.since, "more test"), causeWords[c].had, ago(now.Sub(n.saidAt)), n.tests, ago(now.Sub(n.first)))
	n.since, n.saidAt = 0, now
	return line
}

// armLocked arms the timer that says the counts pending at the end of
// their period, when one is pending and none is armed.
func (t *Tally) armLocked(now time.Time) {
	if t.stop != nil || t.closed {
		return
	}
	var due time.Time
	for _, n := range t.counts {
		if n.since > 0 && (due.IsZero() || n.saidAt.Add(t.period).Before(due)) {
			due = n.saidAt.Add(t.period)
		}
	}
	if !due.IsZero() {
		t.stop = t.after(max(due.Sub(now), 0), t.tick)
	}
}

// tick says the counts whose period is over, and arms the timer for the
// rest.
func (t *Tally) tick() {
	var lines []string
	t.mu.Lock()
	t.stop = nil
	if t.closed {
		t.mu.Unlock()
		return
	}
	now := t.now()
	for c := range nCauses {
		if n := t.counts[c]; n.since > 0 && now.Sub(n.saidAt) >= t.period {
			lines = append(lines, t.countLineLocked(c, now))
		}
	}
	t.armLocked(now)
	t.mu.Unlock()
	t.sayAll(lines)
}

// Close says every count not yet said and stops the timer; Add after it
// still counts, but says only first lines.
func (t *Tally) Close() {
	var lines []string
	t.mu.Lock()
	if t.stop != nil {
		t.stop()
		t.stop = nil
	}
	t.closed = true
	now := t.now()
	for c := range nCauses {
		if t.counts[c].since > 0 {
			lines = append(lines, t.countLineLocked(c, now))
		}
	}
	t.mu.Unlock()
	t.sayAll(lines)
}

func (t *Tally) sayAll(lines []string) {
	for _, l := range lines {
		t.say(l)
	}
}

// ago is d to the second, "under 1s" below it.
func ago(d time.Duration) string {
	if d < time.Second {
		return "under 1s"
	}
	return d.Round(time.Second).String()
}

// plural is "1 test" or "N tests".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
