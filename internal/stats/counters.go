package stats

import (
	"sync/atomic"
	"time"
)

// Counters are one stream's running totals. The goroutine that owns the
// stream writes them (atomic stores, no locks on the per-datagram path) and
// an interval reporter may read them at any moment with Snapshot.
type Counters struct {
	Bytes      atomic.Int64
	Packets    atomic.Int64
	Lost       atomic.Int64 // running loss (gaps open minus gaps filled)
	OutOfOrder atomic.Int64
	Duplicates atomic.Int64
	Errors     atomic.Int64 // send errors for a sender; undecodable datagrams for a receiver
	JitterNS   atomic.Int64
}

// Snapshot is a copy of Counters at one moment.
type Snapshot struct {
	Bytes, Packets, Lost, OutOfOrder, Duplicates, Errors int64
	Jitter                                               time.Duration
}

// Counted says whether d (a difference of two snapshots) counted anything:
// a datagram, a byte, a loss, a reordering or a duplicate.
func (d Snapshot) Counted() bool {
	return d.Bytes != 0 || d.Packets != 0 || d.Lost != 0 || d.OutOfOrder != 0 || d.Duplicates != 0
}

// Snapshot reads the counters.
func (c *Counters) Snapshot() Snapshot {
	return Snapshot{
		Bytes:      c.Bytes.Load(),
		Packets:    c.Packets.Load(),
		Lost:       c.Lost.Load(),
		OutOfOrder: c.OutOfOrder.Load(),
		Duplicates: c.Duplicates.Load(),
		Errors:     c.Errors.Load(),
		Jitter:     time.Duration(c.JitterNS.Load()),
	}
}

// Sub returns the change from prev to s. Jitter is a running estimate, not
// a total, so the result keeps s's value.
func (s Snapshot) Sub(prev Snapshot) Snapshot {
	return Snapshot{
		Bytes:      s.Bytes - prev.Bytes,
		Packets:    s.Packets - prev.Packets,
		Lost:       s.Lost - prev.Lost,
		OutOfOrder: s.OutOfOrder - prev.OutOfOrder,
		Duplicates: s.Duplicates - prev.Duplicates,
		Errors:     s.Errors - prev.Errors,
		Jitter:     s.Jitter,
	}
}

// Add sums two snapshots (for SUM lines over streams). Jitter is averaged
// by the caller if it wants; Add keeps the larger of the two.
func (s Snapshot) Add(o Snapshot) Snapshot {
	j := s.Jitter
	if o.Jitter > j {
		j = o.Jitter
	}
	return Snapshot{
		Bytes:      s.Bytes + o.Bytes,
		Packets:    s.Packets + o.Packets,
		Lost:       s.Lost + o.Lost,
		OutOfOrder: s.OutOfOrder + o.OutOfOrder,
		Duplicates: s.Duplicates + o.Duplicates,
		Errors:     s.Errors + o.Errors,
		Jitter:     j,
	}
}
