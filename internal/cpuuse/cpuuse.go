// Package cpuuse measures the CPU time this process used (user and system)
// between two points, as a share of one core over the wall-clock time
// between them: the figure iperf3 reports as cpu_util.
//
// Linux and darwin read getrusage(RUSAGE_SELF), windows GetProcessTimes;
// elsewhere a Sample is not OK and no figure is made up.
package cpuuse

import "time"

// Sample is the process's CPU time at one moment.
type Sample struct {
	At           time.Time
	User, System time.Duration
	// OK is false when the platform could not say.
	OK bool
}

// Now samples the process's CPU time.
func Now() Sample {
	u, s, ok := processTimes()
	return Sample{At: time.Now(), User: u, System: s, OK: ok}
}

// Usage is the CPU time used between two samples.
type Usage struct {
	User, System time.Duration
	Wall         time.Duration
}

// Between returns the CPU used from a to b; ok is false when either sample
// is not OK or no time passed.
func Between(a, b Sample) (Usage, bool) {
	if !a.OK || !b.OK || !b.At.After(a.At) {
		return Usage{}, false
	}
	return Usage{User: max(b.User-a.User, 0), System: max(b.System-a.System, 0), Wall: b.At.Sub(a.At)}, true
}

// Percent returns user+system, user and system time as percent of one core
// over the wall-clock time (200 = two cores busy throughout).
func (u Usage) Percent() (total, user, system float64) {
	if u.Wall <= 0 {
		return 0, 0, 0
	}
	w := float64(u.Wall)
	user, system = 100*float64(u.User)/w, 100*float64(u.System)/w
	return user + system, user, system
}
