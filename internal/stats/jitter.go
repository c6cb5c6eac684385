package stats

import "time"

// Jitter is the RFC 3550 (section 6.4.1) interarrival jitter estimator:
// J += (|D| - J) / 16, where D is the difference between the transit times
// (arrival minus sender timestamp) of consecutive datagrams in arrival
// order. The first datagram only sets the reference: it has no previous
// transit to differ from, so it contributes no sample (iperf 2.1.8 instead
// differences it against zero, which inflates short tests).
//
// Transit times include the clock offset between sender and receiver; the
// offset cancels in D as long as it is steady. A sender that stamps zeros
// (ESP-IDF) yields transit = arrival time, so the jitter then measures the
// variation of arrival spacing only relative to nothing: callers should
// mark such jitter as untrustworthy.
type Jitter struct {
	have      bool
	prev      time.Duration
	j         float64 // nanoseconds
	samples   int64
	zeroStamp int64
}

// Add records the transit time of the next datagram in arrival order.
func (j *Jitter) Add(transit time.Duration) {
	if !j.have {
		j.have = true
		j.prev = transit
		return
	}
	d := float64(transit - j.prev)
	j.prev = transit
	if d < 0 {
		d = -d
	}
	j.j += (d - j.j) / 16
	j.samples++
}

// AddStamped computes the transit time from an arrival time and the
// sender's timestamp and adds it. A zero sender timestamp is counted in
// ZeroStamps and skipped: it carries no timing.
func (j *Jitter) AddStamped(arrival, sent time.Time) {
	if !Stamped(sent) {
		j.zeroStamp++
		return
	}
	j.Add(arrival.Sub(sent))
}

// Value returns the current jitter estimate.
func (j *Jitter) Value() time.Duration { return time.Duration(j.j) }

// Samples returns how many differences went into the estimate.
func (j *Jitter) Samples() int64 { return j.samples }

// ZeroStamps returns how many datagrams carried no sender timestamp.
func (j *Jitter) ZeroStamps() int64 { return j.zeroStamp }

// Stamped says whether a sender's timestamp carries timing: a zero time
// or a zero Unix second (ESP-IDF's zero-filled header) does not.
func Stamped(sent time.Time) bool { return !sent.IsZero() && sent.Unix() != 0 }
