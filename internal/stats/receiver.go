package stats

import "time"

// UDPReceiver accounts for the datagrams of one UDP stream: sequence
// tracking, jitter and the counters interval reports read. Bytes and
// Packets count distinct datagrams only; duplicates are counted apart and
// never add to goodput. It is owned by one goroutine.
//
// C is what other goroutines read (interval reports, metrics). Datagram
// leaves it be: the owner calls Publish once per read, which saves five
// atomic stores (each a full memory barrier on amd64) per datagram, a
// fifth of a busy receiver's CPU at 64-byte datagrams. C then lags the
// counts by the datagrams of the read in hand, never by more.
type UDPReceiver struct {
	Seq    *SeqTracker
	Jitter Jitter
	// Transit is the distribution of one-way transit times, kept only
	// with KeepTransit (about 41 KB a stream once the first stamped
	// datagram arrives): for receivers whose report carries it.
	Transit     Transit
	KeepTransit bool
	C           Counters

	bytes       int64
	first, last time.Time
}

// NewUDPReceiver returns a receiver expecting ids from firstID.
func NewUDPReceiver(firstID int64) *UDPReceiver {
	return &UDPReceiver{Seq: NewSeqTracker(firstID)}
}

// Datagram records one data datagram of n payload bytes with sequence id,
// arriving at arrival, stamped by the sender at sent (zero when the sender
// stamps nothing).
func (r *UDPReceiver) Datagram(id int64, n int, arrival, sent time.Time) Kind {
	k := r.Seq.Add(id)
	if k == Duplicate {
		return k
	}
	if r.first.IsZero() {
		r.first = arrival
	}
	r.last = arrival
	r.bytes += int64(n)
	// One transit per datagram feeds both the jitter and, when kept, the
	// transit distribution; a zero stamp carries no timing.
	if Stamped(sent) {
		d := arrival.Sub(sent)
		r.Jitter.Add(d)
		if r.KeepTransit {
			r.Transit.AddMicros(d.Microseconds())
		}
	} else {
		r.Jitter.zeroStamp++
	}
	return k
}

// Publish stores the counts in C: the owner calls it at the end of each
// read, and before anything reads C as final.
func (r *UDPReceiver) Publish() {
	r.C.Duplicates.Store(r.Seq.Duplicates())
	r.C.Bytes.Store(r.bytes)
	r.C.Packets.Store(r.Seq.Received())
	r.C.Lost.Store(r.Seq.RunningLost())
	r.C.OutOfOrder.Store(r.Seq.OutOfOrder())
	r.C.JitterNS.Store(int64(r.Jitter.Value()))
}

// Bytes returns the payload bytes of distinct datagrams received.
func (r *UDPReceiver) Bytes() int64 { return r.bytes }

// FirstArrival and LastArrival bound the receive period (zero before any
// datagram arrived).
func (r *UDPReceiver) FirstArrival() time.Time { return r.first }

// LastArrival is the arrival time of the latest non-duplicate datagram.
func (r *UDPReceiver) LastArrival() time.Time { return r.last }
