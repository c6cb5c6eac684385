package ping

import "time"

// timeAt is a fixed instant plus ms milliseconds.
func timeAt(ms int) time.Time {
	return time.Unix(1_700_000_000, 0).Add(time.Duration(ms) * time.Millisecond)
}
