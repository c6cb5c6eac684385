package udpstream

import (
	"sync/atomic"

	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// testIDBase is added to the first id of every stream this process sends
// and expects (FirstID), and to the counts its FINs carry. Only tests set
// it (SetTestIDBase): a stream that starts just below 2^31 crosses the
// 32-bit wrap in a handful of datagrams rather than after 35 minutes at
// 1 M/s. Both ends read it, so a loopback test's receiver expects the ids
// its sender starts at; the receive counts then stand as if base
// datagrams had arrived before (the report's total is base above them).
var testIDBase atomic.Int64

// SetTestIDBase makes every stream start its ids base above its layout's
// first id (0: as on the wire). For tests only.
func SetTestIDBase(base int64) { testIDBase.Store(base) }

// FirstID is the id of a stream's first data datagram in layout l.
func FirstID(l i2wire.Layout) int64 { return l.FirstID() + testIDBase.Load() }

// finID is the id of FIN retry of a stream of dataSent data datagrams.
func finID(l i2wire.Layout, dataSent int64, retry int) int64 {
	return i2wire.FINID(l, testIDBase.Load()+dataSent, retry)
}
