package stats

import "time"

// Thinned keeps a uniform sample of a series of (value, time) pairs in
// arrival order in bounded memory: every pair until it holds Size, then
// every second one, every fourth, and so on. When it fills it drops every
// other pair it holds and doubles its step, so whatever the series' length
// the pairs held are every Step-th of it, from the first, and never more
// than Size; its memory grows with the series up to Size pairs. It is
// owned by one goroutine; allocate with NewThinned.
type Thinned struct {
	size  int
	step  int64
	n     int64 // pairs added in all
	vals  []time.Duration
	times []time.Duration
}

// NewThinned returns a sample of at most size pairs (at least 2; an odd
// size is rounded down to even, so that halving keeps the step uniform).
func NewThinned(size int) *Thinned {
	size = max(size, 2) &^ 1
	return &Thinned{size: size, step: 1}
}

// Add records one pair.
func (s *Thinned) Add(v, at time.Duration) {
	s.n++
	if (s.n-1)%s.step != 0 {
		return
	}
	if n := len(s.vals); n == cap(s.vals) && n < s.size {
		// Grow by doubling up to size: a short series (a sweep trial of a
		// few thousand datagrams) holds only what it used, not size pairs.
		c := min(max(2*n, 64), s.size)
		s.vals, s.times = append(make([]time.Duration, 0, c), s.vals...), append(make([]time.Duration, 0, c), s.times...)
	}
	if len(s.vals) == s.size {
		// Keep the pairs at even positions (series index 0, 2·step, …):
		// the next kept one, n−1, is a multiple of the doubled step.
		for i := 0; i < s.size/2; i++ {
			s.vals[i], s.times[i] = s.vals[2*i], s.times[2*i]
		}
		s.vals, s.times = s.vals[:s.size/2], s.times[:s.size/2]
		s.step *= 2
		if (s.n-1)%s.step != 0 {
			return
		}
	}
	s.vals = append(s.vals, v)
	s.times = append(s.times, at)
}

// Values and Times return the pairs held, in arrival order (the slices
// are the sample's own: read them, do not keep them across Add).
func (s *Thinned) Values() []time.Duration { return s.vals }

// Times returns the times of the pairs held; see Values.
func (s *Thinned) Times() []time.Duration { return s.times }

// Step is how many pairs of the series each pair held stands for: the
// held ones are the series' pairs 0, Step, 2·Step, ….
func (s *Thinned) Step() int64 { return s.step }

// Added returns how many pairs were added in all.
func (s *Thinned) Added() int64 { return s.n }

// Cap returns the memory the sample holds, in pairs.
func (s *Thinned) Cap() int { return cap(s.vals) }
