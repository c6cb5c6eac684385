package engine

import "time"

// parseRunDelay reads the run delay, the second of schedstat's three
// fields ("on-CPU-ns run-delay-ns timeslices"), without allocating.
func parseRunDelay(b []byte) (time.Duration, bool) {
	field, v, digits := 0, int64(0), 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if field == 1 {
				if v > (1<<63-1-9)/10 {
					return 0, false // beyond 292 years: not a run delay
				}
				v = v*10 + int64(c-'0')
				digits++
			}
		case c == ' ' && (field == 0 || digits > 0):
			if field == 1 {
				return time.Duration(v), true
			}
			field++
		default:
			return 0, false
		}
	}
	return 0, false
}
