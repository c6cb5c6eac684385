package connectback

import (
	"time"

	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// SenderHeader is the client header a server puts in the datagrams of its
// UDP connect-back (length bytes each, for d or for bytes when bytes > 0,
// at bps) to a client whose own header was asked: a 2.1-style header with
// FlagSeqNo64b, which says the datagrams' upper id word is valid, when
// the client asked for 64-bit ids too, and nil (a header-less stream, as
// iperf 2 servers send) otherwise or when the datagrams cannot hold it.
//
// Without it, the client's receiver has only the lower 32 bits of each id
// and extends them past their wrap (i2wire.IDExtender), which near each
// multiple of 2^31 must guess between a datagram and the FIN. With it, a
// wirebench client reads the ids whole. An iperf 2.1 client reads every
// connect-back's ids as 64-bit and its header not at all; a 2.0.5 client
// reads the lower word alone, as before: neither reads it differently.
// The header never carries FlagVersion1: it asks for no connect-back.
func SenderHeader(asked i2wire.ClientHeader, length int, d time.Duration, bytes int64, bps float64) []byte {
	if asked.Flags&i2wire.FlagSeqNo64b == 0 {
		return nil
	}
	h := i2wire.NewClientHeader(true, 1, 0)
	if h.Len()+i2wire.LayoutModern.HeaderLen() > length {
		return nil
	}
	h.BufLen = int32(length)
	h.Amount = i2wire.AmountForDuration(d)
	if bytes > 0 {
		h.Amount = i2wire.AmountForBytes(bytes)
	}
	h.SetRate(uint64(bps), false)
	return h.AppendUDPTo(nil)
}
