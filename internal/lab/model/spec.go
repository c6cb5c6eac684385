// Package model is the device and link model behind wirebench's relay and
// reflector: loss (uniform or Gilbert–Elliott bursts), reordering,
// duplication, corruption, delay and jitter, a rate-limited serialisation
// queue, a device that serves receive buffers at a fixed rate, a per-tick
// frame budget and a size limit.
//
// It is pure: no sockets, no clock, no goroutines. Every call is given the
// time (an offset from the start of the run), so a test drives it with a
// fake clock and gets the same fates from the same seed. The model syntax is
// one comma-separated list of key=value pairs (see Parse and docs/lab.md).
package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/units"
)

// Spec is a parsed model. The zero value passes everything unchanged.
type Spec struct {
	// Loss, Reorder, Dup and Corrupt are probabilities per datagram, 0 to 1.
	Loss, Reorder, Dup, Corrupt float64
	// Burst is the Gilbert–Elliott loss process; nil when not set.
	Burst *Burst
	// Delay is added to every datagram; Jitter spreads it uniformly over
	// ±Jitter without reordering (a datagram never overtakes the one before).
	Delay, Jitter time.Duration
	// Seed makes the fates repeatable; HasSeed says it was given.
	Seed    uint64
	HasSeed bool

	// Rate is the link rate in bit/s (0: none); Overhead is the medium whose
	// framing every datagram pays on it (see OverheadName).
	Rate         float64
	Overhead     linerate.Medium
	OverheadName string
	// QueueBytes or QueueTime bound what may wait in front of the rate,
	// service and tick stages; both 0 means DefaultQueueTime.
	QueueBytes int64
	QueueTime  time.Duration

	// Service is receive buffers served per second (0: none), Buffer the
	// payload bytes per buffer (0: one datagram per buffer), PerBuffer the
	// most datagrams per buffer (0: no cap).
	Service   float64
	Buffer    int
	PerBuffer int

	// TickPeriod and TickBudget: at most TickBudget datagrams leave per
	// TickPeriod (0: no tick stage).
	TickPeriod time.Duration
	TickBudget int

	// Max drops datagrams with a payload over Max bytes (0: no limit).
	Max int
}

// Burst is a Gilbert–Elliott loss process: runs of the good state last
// Good datagrams on average, runs of the bad state Bad datagrams, and in the
// bad state a datagram is lost with probability Loss.
type Burst struct {
	Good, Bad float64
	Loss      float64
}

// DefaultQueueTime is the queue in front of the rate, service and tick
// stages when the model sets none: a datagram that would wait longer is
// dropped. It is long enough to ride out a sender that a loaded host
// deschedules for tens of milliseconds (the arrivals then come in bursts
// and a short queue would lose the budget of the idle ticks after them).
const DefaultQueueTime = 200 * time.Millisecond

// Empty reports whether the spec changes nothing.
func (s Spec) Empty() bool {
	return s.Loss == 0 && s.Reorder == 0 && s.Dup == 0 && s.Corrupt == 0 && s.Burst == nil &&
		s.Delay == 0 && s.Jitter == 0 && s.Rate == 0 && s.Service == 0 && s.TickPeriod == 0 && s.Max == 0
}

// Parse reads a model such as "loss=1%,reorder=0.5%,seed=7" or
// "service=5000,buffer=2524". An empty string is the empty model. The error
// names the offending key=value and what was expected.
func Parse(text string) (Spec, error) {
	var s Spec
	text = strings.TrimSpace(text)
	if text == "" {
		return s, nil
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(text, ",") {
		kv = strings.TrimSpace(kv)
		key, val, ok := strings.Cut(kv, "=")
		if !ok || key == "" || val == "" {
			return Spec{}, fmt.Errorf("model: %q is not key=value", kv)
		}
		if seen[key] {
			return Spec{}, fmt.Errorf("model: %q given twice", key)
		}
		seen[key] = true
		if err := s.set(key, val); err != nil {
			return Spec{}, fmt.Errorf("model: %q: %w", kv, err)
		}
	}
	if err := s.check(seen); err != nil {
		return Spec{}, fmt.Errorf("model: %w", err)
	}
	return s, nil
}

// keys lists the model's keys, for the unknown-key error.
const keys = "loss, burst, reorder, dup, corrupt, delay, jitter, seed, rate, overhead, queue, service, buffer, per-buffer, tick, max"

func (s *Spec) set(key, val string) error {
	var err error
	switch key {
	case "loss":
		s.Loss, err = percent(val)
	case "reorder":
		s.Reorder, err = percent(val)
	case "dup":
		s.Dup, err = percent(val)
	case "corrupt":
		s.Corrupt, err = percent(val)
	case "burst":
		s.Burst, err = parseBurst(val)
	case "delay":
		s.Delay, err = duration(val)
	case "jitter":
		s.Jitter, err = duration(val)
	case "seed":
		s.Seed, err = strconv.ParseUint(val, 10, 64)
		if err != nil {
			return fmt.Errorf("want a whole number 0 or more")
		}
		s.HasSeed = true
	case "rate":
		s.Rate, err = parseRate(val)
	case "overhead":
		s.Overhead, err = parseOverhead(val)
		s.OverheadName = val
	case "queue":
		s.QueueBytes, s.QueueTime, err = parseQueue(val)
	case "service":
		s.Service, err = positive(val)
	case "buffer":
		s.Buffer, err = positiveInt(val)
	case "per-buffer":
		s.PerBuffer, err = positiveInt(val)
	case "tick":
		s.TickPeriod, s.TickBudget, err = parseTick(val)
	case "max":
		s.Max, err = positiveInt(val)
	default:
		return fmt.Errorf("unknown key (known: %s)", keys)
	}
	return err
}

// check validates combinations and fills defaults.
func (s *Spec) check(seen map[string]bool) error {
	if s.Reorder+s.Dup+s.Corrupt > 1 {
		return fmt.Errorf("reorder + dup + corrupt exceed 100%%")
	}
	if s.Jitter > 0 && s.Jitter > s.Delay {
		return fmt.Errorf("jitter=%v exceeds delay=%v: a datagram cannot leave before it arrived", s.Jitter, s.Delay)
	}
	if seen["overhead"] && s.Rate == 0 {
		return fmt.Errorf("overhead= needs rate=")
	}
	if (seen["buffer"] || seen["per-buffer"]) && s.Service == 0 {
		return fmt.Errorf("buffer= and per-buffer= need service=")
	}
	if seen["queue"] && s.Rate == 0 && s.Service == 0 && s.TickPeriod == 0 {
		return fmt.Errorf("queue= needs rate=, service= or tick=")
	}
	if s.Rate > 0 && !seen["overhead"] {
		s.Overhead, _ = parseOverhead("ethernet")
		s.OverheadName = "ethernet"
	}
	return nil
}

func percent(v string) (float64, error) {
	num, ok := strings.CutSuffix(v, "%")
	if !ok {
		return 0, fmt.Errorf("want a percentage such as 1%% or 0.5%%")
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 100 {
		return 0, fmt.Errorf("want a percentage from 0%% to 100%%")
	}
	return f / 100, nil
}

func duration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > time.Minute {
		return 0, fmt.Errorf("want a duration such as 20ms, from 0 to 1m")
	}
	return d, nil
}

func positive(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 || f > 1e9 {
		return 0, fmt.Errorf("want a number above 0")
	}
	return f, nil
}

func positiveInt(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n > 1<<30 {
		return 0, fmt.Errorf("want a whole number above 0")
	}
	return n, nil
}

func parseBurst(v string) (*Burst, error) {
	parts := strings.Split(v, "/")
	if len(parts) != 3 {
		return nil, fmt.Errorf("want GOOD/BAD/LOSS, such as 1000/10/50%% (mean good and bad run lengths in datagrams, loss in the bad state)")
	}
	good, err1 := strconv.ParseFloat(parts[0], 64)
	bad, err2 := strconv.ParseFloat(parts[1], 64)
	if err1 != nil || err2 != nil || !(good >= 1) || !(bad >= 1) || math.IsInf(good, 0) || math.IsInf(bad, 0) {
		return nil, fmt.Errorf("GOOD and BAD are mean run lengths in datagrams, 1 or more")
	}
	loss, err := percent(parts[2])
	if err != nil {
		return nil, fmt.Errorf("LOSS: %w", err)
	}
	return &Burst{Good: good, Bad: bad, Loss: loss}, nil
}

func parseRate(v string) (float64, error) {
	l := strings.ToLower(v)
	for _, suf := range []string{"bit", "bps"} {
		if s, ok := strings.CutSuffix(l, suf); ok {
			l = s
			break
		}
	}
	// units.ParseRate wants the SI prefixes as k, M, G.
	if n := len(l); n > 0 {
		switch l[n-1] {
		case 'm':
			l = l[:n-1] + "M"
		case 'g':
			l = l[:n-1] + "G"
		}
	}
	r, err := units.ParseRate(l)
	if err != nil || r.PPS || r.Value > 1e12 {
		return 0, fmt.Errorf("want a bit rate such as 100mbit, 2.5M or 64k")
	}
	return r.Value, nil
}

// overheadAliases maps the short medium names of the model syntax to the
// line-rate model's media; any linerate medium name is accepted as well.
var overheadAliases = map[string]string{
	"ethernet":  "eth100",
	"usb-ecm":   "usb2-ecm",
	"usb-eem":   "usb2-eem",
	"usb-ncm":   "usb2-ncm",
	"usb-rndis": "usb2-rndis",
}

func parseOverhead(v string) (linerate.Medium, error) {
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 || n > 65535 {
			return linerate.Medium{}, fmt.Errorf("want 0 to 65535 bytes per IP packet")
		}
		return linerate.LookupMedium(fmt.Sprintf("custom:1G,%d", n))
	}
	name := v
	if a, ok := overheadAliases[v]; ok {
		name = a
	}
	if strings.HasPrefix(name, "custom:") {
		return linerate.Medium{}, fmt.Errorf("want ethernet, usb-ecm, usb-eem, usb-ncm, usb-rndis, a medium name or a byte count")
	}
	m, err := linerate.LookupMedium(name)
	if err != nil {
		return linerate.Medium{}, fmt.Errorf("want ethernet, usb-ecm, usb-eem, usb-ncm, usb-rndis, a medium name (%s) or a byte count",
			strings.Join(linerate.MediumNames(), ", "))
	}
	return m, nil
}

func parseQueue(v string) (int64, time.Duration, error) {
	if d, err := time.ParseDuration(v); err == nil {
		if d <= 0 || d > time.Minute {
			return 0, 0, fmt.Errorf("want a time above 0 and at most 1m")
		}
		return 0, d, nil
	}
	n, err := units.ParseSize(v)
	if err != nil || n <= 0 || n > 1<<30 {
		return 0, 0, fmt.Errorf("want a size such as 64K or a time such as 5ms")
	}
	return n, 0, nil
}

func parseTick(v string) (time.Duration, int, error) {
	p, c, ok := strings.Cut(v, "/")
	if !ok {
		return 0, 0, fmt.Errorf("want PERIOD/COUNT such as 1ms/7")
	}
	d, err := time.ParseDuration(p)
	if err != nil || d < 10*time.Microsecond || d > time.Second {
		return 0, 0, fmt.Errorf("want PERIOD/COUNT such as 1ms/7, PERIOD from 10µs to 1s")
	}
	n, err := positiveInt(c)
	if err != nil {
		return 0, 0, fmt.Errorf("want PERIOD/COUNT such as 1ms/7, COUNT above 0")
	}
	return d, n, nil
}
