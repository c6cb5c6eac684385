package session

import (
	"fmt"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/stats"
)

// MaxOmit is the longest -O/--omit accepted, as iperf3 3.12 has it.
const MaxOmit = 60 * time.Second

// ValidateOmit checks -O against the rest of the test.
func ValidateOmit(omit time.Duration, bytes int64) error {
	switch {
	case omit < 0 || omit > MaxOmit:
		return fmt.Errorf("-O/--omit %v out of range 0-%v", omit, MaxOmit)
	case omit%time.Second != 0:
		return fmt.Errorf("-O/--omit %v: whole seconds only (iperf3 carries it as an integer)", omit)
	case omit > 0 && bytes > 0:
		return fmt.Errorf("-O/--omit leaves seconds out of a timed test; it does not combine with -n")
	}
	return nil
}

// omitSums adds up the omitted intervals of ivs, one sum per flow name
// (for per-stream intervals, the stream id). Jitter and TCP figures are
// not summed: only the counts are taken out of the summary.
func omitSums(ivs []result.Interval) map[string]result.Interval {
	sums := map[string]result.Interval{}
	for _, in := range ivs {
		if !in.Omitted {
			continue
		}
		s := sums[in.Flow]
		s.Bytes += in.Bytes
		s.Packets += in.Packets
		s.Lost += in.Lost
		s.OutOfOrder += in.OutOfOrder
		s.Duplicates += in.Duplicates
		sums[in.Flow] = s
	}
	return sums
}

// omitSender takes the omitted counts o and the omit seconds out of a
// sender's figures.
func omitSender(s *result.Sender, o result.Interval, omit float64) {
	if s == nil {
		return
	}
	s.Bytes = max(s.Bytes-o.Bytes, 0)
	if s.BytesWritten > 0 {
		s.BytesWritten = max(s.BytesWritten-o.Bytes, 0)
	}
	s.Packets = max(s.Packets-o.Packets, 0)
	s.Seconds = max(s.Seconds-omit, 0)
	pps := s.PacketsPerSecond != 0
	s.BitsPerSecond, s.PacketsPerSecond = 0, 0
	RateOf(s)
	if !pps {
		s.PacketsPerSecond = 0
	}
}

// omitReceiver takes the omitted counts o and the omit seconds out of a
// receiver's figures counted on this side.
func omitReceiver(rr *result.Receiver, o result.Interval, omit float64) {
	if rr == nil || rr.Source != "local" {
		return
	}
	rr.Bytes = max(rr.Bytes-o.Bytes, 0)
	rr.Packets = max(rr.Packets-o.Packets, 0)
	rr.Lost = max(rr.Lost-o.Lost, 0)
	rr.OutOfOrder = max(rr.OutOfOrder-o.OutOfOrder, 0)
	if rr.Duplicates != nil {
		rr.Duplicates = result.Count(max(*rr.Duplicates-o.Duplicates, 0))
	}
	if rr.Total > 0 {
		rr.Total = max(rr.Total-o.Packets-o.Lost, 0)
	}
	rr.Seconds = max(rr.Seconds-omit, 0)
	pps := rr.PacketsPerSecond != 0
	rr.BitsPerSecond, rr.PacketsPerSecond = 0, 0
	SetReceiverRates(rr, pps)
}

// ApplyOmit takes the omitted period (-O) out of the figures this side
// counted, from the intervals the reporter marked Omitted: the main flow's
// ("" or "forward") from Sender and a local Receiver, the "reverse" flow's
// from Reverse. perStream, when not nil, are the streams' omitted counts
// by stream id (streamOmits); without them, Streams keep the whole test
// and a warning says so. A receiver count reported by the peer
// is left as it came: peerOmits says the peer left the period out itself
// (iperf3); otherwise a warning says its figure includes the period.
func ApplyOmit(r *result.Result, omit time.Duration, perStream map[string]result.Interval, peerOmits bool) {
	if omit <= 0 {
		return
	}
	secs := omit.Seconds()
	r.Test.Omit = secs
	// A flow with no omitted interval started after the period (the
	// connect-back of -r): it keeps all its figures.
	sums := omitSums(r.Intervals)
	main, ok := sums[""]
	if f, fok := sums["forward"]; fok {
		main, ok = f, true
	}
	if ok {
		omitSender(r.Sender, main, secs)
		omitReceiver(r.Receiver, main, secs)
	}
	if o, ok := sums["reverse"]; ok && r.Reverse != nil {
		omitSender(r.Reverse.Sender, o, secs)
		omitReceiver(r.Reverse.Receiver, o, secs)
	}
	peerWhole := false
	for _, rr := range []*result.Receiver{r.Receiver, reverseReceiver(r)} {
		if rr == nil || rr.Source == "local" {
			continue
		}
		for i := range rr.Intervals {
			rr.Intervals[i].Omitted = rr.Intervals[i].End <= secs+1e-3
		}
		peerWhole = peerWhole || !peerOmits
	}
	if peerWhole {
		r.Warn(fmt.Sprintf("the peer's report covers the whole test, the %g omitted seconds (-O) included: its dialect has no omit on the wire, so only the figures counted here leave them out", secs))
	}
	if len(r.Streams) == 0 {
		return
	}
	if perStream == nil {
		r.Warn(fmt.Sprintf("the per-stream figures cover the whole test, the %g omitted seconds (-O) included; the sums leave them out", secs))
		return
	}
	for i := range r.Streams {
		st := &r.Streams[i]
		if o, ok := perStream[strconv.Itoa(st.ID)]; ok {
			omitSender(st.Sender, o, secs)
			omitReceiver(st.Receiver, o, secs)
		}
	}
}

// reverseReceiver is r.Reverse.Receiver, or nil.
func reverseReceiver(r *result.Result) *result.Receiver {
	if r.Reverse == nil {
		return nil
	}
	return r.Reverse.Receiver
}

// OmitLossWarning says a peer's UDP loss count includes the omitted period.
const OmitLossWarning = "the peer's UDP loss count covers the omitted seconds (-O) too: iperf3 sends it whole, and only a wirebench peer's intervals tell the omitted part apart"

// StreamOmits reads what each stream's counters had counted when the
// omitted period ended, from iv (the reporter whose omitted intervals
// the summary subtracts, so per-stream figures add up to it), by stream
// id; nil without an omitted period.
func StreamOmits(iv *engine.Intervals, omit time.Duration, ids []int64, cs []*stats.Counters) map[string]result.Interval {
	if omit <= 0 {
		return nil
	}
	out := make(map[string]result.Interval, len(ids))
	for i, id := range ids {
		if s, ok := iv.OmittedCounts(cs[i]); ok {
			out[strconv.FormatInt(id, 10)] = result.Interval{Bytes: s.Bytes, Packets: s.Packets, Lost: s.Lost,
				OutOfOrder: s.OutOfOrder, Duplicates: s.Duplicates}
		}
	}
	return out
}

// SetReceiverRates fills a receiver's rates from its bytes, packets (udp)
// and seconds.
func SetReceiverRates(rr *result.Receiver, udp bool) {
	if rr.Seconds > 0 {
		rr.BitsPerSecond = float64(rr.Bytes) * 8 / rr.Seconds
		if udp {
			rr.PacketsPerSecond = float64(rr.Packets) / rr.Seconds
		}
	}
}
