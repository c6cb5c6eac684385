package udpstream

import (
	"math"

	"github.com/wirebench/wirebench/internal/result"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// What a client (or a server in a connect-back test) makes of the peer's
// server report.

// ImplausibleReport is the warning for a peer report whose counts cannot
// be real (2^63 or more): they are shown as the largest count instead of
// turning negative.
const ImplausibleReport = "the peer's report carries counts of 2^63 or more, which no test reaches: its receive counts cannot be trusted"

// reportCount is a peer-reported count as int64, saturated (and flagged)
// at the largest int64 rather than wrapping negative.
func reportCount(v uint64, implausible *bool) int64 {
	if v > math.MaxInt64 {
		*implausible = true
		return math.MaxInt64
	}
	return int64(v)
}

// ReportReceiver turns a server report into receiver counts; implausible
// says a count was out of range (see ImplausibleReport).
func ReportReceiver(rep *i2wire.ServerReport) (rr *result.Receiver, implausible bool) {
	rr = &result.Receiver{
		Bytes: reportCount(rep.TotalBytes, &implausible), Lost: reportCount(rep.Errors, &implausible),
		OutOfOrder: reportCount(rep.OutOfOrder, &implausible), Total: reportCount(rep.Datagrams, &implausible),
		JitterMS: float64(rep.Jitter) / 1e6, Seconds: rep.Stop.Seconds(), Source: "peer-report",
	}
	if rep.WB != nil && rep.WB.HasDuplicates {
		// A wirebench server's own count; other peers' reports carry none,
		// and it stays unknown (nil), not 0.
		rr.Duplicates = result.Count(reportCount(rep.WB.Duplicates, &implausible))
	}
	if rep.WB != nil && rep.WB.HasLatency {
		l := rep.WB.Latency
		rr.Transit = &result.Transit{Min: l.MinUS, P50: l.P50US, P90: l.P90US, P99: l.P99US, P999: l.P999US,
			Max: l.MaxUS, Count: reportCount(l.Count, &implausible)}
	}
	rr.Packets = max(rr.Total-rr.Lost, 0)
	if rr.Seconds > 0 {
		rr.BitsPerSecond = float64(rr.Bytes) * 8 / rr.Seconds
		rr.PacketsPerSecond = float64(rr.Packets) / rr.Seconds
	}
	return rr, implausible
}

// CountFINs reads what the total of a report (rr, from ReportReceiver)
// that answered a test of data data datagrams and fins FINs in layout l
// counts, and sets rr to match. It returns how many FINs count as sent
// datagrams.
//
//   - iperf 2 and the new zperf send the highest id seen, the answered
//     FIN's |id| (a FIN counts as datagram |id|): a total within the ids of
//     the FINs sent. A 2.1 client's FIN ids count down, so a total k above
//     the first FIN's says the k FINs before the answered one were lost;
//     they count as sent, as the receiver counts them lost (and the relay
//     dropped). rr.Counting is result.CountingHighestID.
//   - the old zperf sends the datagrams it received: a total below the
//     first FIN's id, which no report answering a FIN can have as a highest
//     id. The total is then received + lost, and rr.Counting is
//     result.CountingReceived.
//   - a total above the last FIN sent fits neither: rr is left as iperf
//     reads it, and rr.Counting empty (unknown).
func CountFINs(rr *result.Receiver, l i2wire.Layout, data int64, fins int) int64 {
	if fins <= 0 {
		return 0
	}
	lo := -finID(l, data, 0)
	hi := -finID(l, data, fins-1)
	switch total := rr.Total; {
	case total >= lo && total <= hi:
		rr.Counting = result.CountingHighestID
		return 1 + total - lo
	case total < lo:
		rr.Counting = result.CountingReceived
		rr.Packets = total
		rr.Total = total + rr.Lost
		if rr.Seconds > 0 {
			rr.PacketsPerSecond = float64(rr.Packets) / rr.Seconds
		}
	}
	return 1
}
