package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// WritePing prints a ping run's summary: the statistics table, the
// implied rates (--medium) and why it stopped early.
func WritePing(w io.Writer, res *result.PingRun, implied []result.PingImplied, explain bool) error {
	var b strings.Builder
	writePingTable(&b, res)
	for _, r := range implied {
		writePingImplied(&b, r, explain)
	}
	if res.Error != "" {
		fmt.Fprintf(&b, "stopped early: %s\n", res.Error)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writePingTable prints the statistics table, one row per size, and what
// each size's row cannot say (fragmentation needed, send errors, round
// trips timed from the send call, our own socket's drops).
func writePingTable(w io.Writer, r *result.PingRun) {
	df := "off"
	if r.DF {
		df = "on"
	}
	mtu := "unknown"
	if r.PathMTU > 0 {
		mtu = strconv.Itoa(r.PathMTU)
	}
	fmt.Fprintf(w, "--- %s ping statistics ---\n", r.Target)
	fmt.Fprintf(w, "socket: %s; DF %s; path MTU %s\n", PingSocketWords(r.Socket, r.ID), df, mtu)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "size\tfrags\tsent\trecv\tloss %%\tcorrupt\tdup\tlate\tfrag-needed\tmin/avg/max/mdev ms\tp50/p90/p99 ms\t\n")
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }
	for _, s := range r.Sizes {
		rtt := "-\t-"
		if s.Received > 0 {
			rtt = fmt.Sprintf("%s/%s/%s/%s\t%s/%s/%s", ms(s.RTT.Min), ms(s.RTT.Avg), ms(s.RTT.Max), ms(s.RTT.Mdev),
				ms(s.RTT.P50), ms(s.RTT.P90), ms(s.RTT.P99))
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%.1f\t%d\t%d\t%d\t%d\t%s\t\n", s.Size, s.Fragments, s.Sent, s.Received, s.LossPct,
			s.Corrupt, s.Duplicates, s.Late, s.TooBig, rtt)
	}
	tw.Flush()
	for _, s := range r.Sizes {
		if s.TooBig > 0 {
			fmt.Fprintf(w, "size %d: %s\n", s.Size, result.PingNeedsFragmentation(s.PathMTU))
		}
		if s.Error != "" {
			fmt.Fprintf(w, "size %d: %s, first: %s\n", s.Size, units.Plural(s.SendErrors, "send error"), s.Error)
		}
		if r.Socket.TxTimestamps == result.PingTimestampKernel && s.KernelTx < s.Received {
			fmt.Fprintf(w, "size %d: %d of %d round trips timed from the send call: no kernel transmit timestamp came for them\n",
				s.Size, s.Received-s.KernelTx, s.Received)
		}
		if s.SocketDrops > 0 {
			fmt.Fprintf(w, "WARNING size %d: our own socket dropped %d ICMP messages (receive buffer full): "+
				"replies lost on this host count as loss here\n", s.Size, s.SocketDrops)
		}
	}
}

// PingSocketWords says in words what socket a ping run used and how it
// timed the round trips.
func PingSocketWords(s result.PingSocket, id int) string {
	rx := "kernel receive timestamps (SO_TIMESTAMPNS)"
	if s.RxTimestamps != result.PingTimestampKernel {
		rx = "user-space receive times"
		if s.RxTimestampsWhy != "" {
			rx += " (" + s.RxTimestampsWhy + ")"
		}
	}
	tx := "kernel transmit timestamps (SO_TIMESTAMPING: request entering the queueing layer)"
	if s.TxTimestamps != result.PingTimestampKernel {
		tx = "send times taken before the send call"
		if s.TxTimestampsWhy != "" {
			tx += " (" + s.TxTimestampsWhy + ")"
		}
	}
	kind := fmt.Sprintf("%s ICMP socket (%s)", s.Kind, s.Network)
	if s.Source != "" {
		kind += " bound to " + s.Source
	}
	if id == 0 {
		return fmt.Sprintf("%s, %s, %s", kind, tx, rx)
	}
	return fmt.Sprintf("%s, id %d, %s, %s", kind, id, tx, rx)
}

// writePingImplied prints one size's implied rate, with the steps of the
// sum when explain is set.
func writePingImplied(w io.Writer, r result.PingImplied, explain bool) {
	if r.Error != "" {
		fmt.Fprintf(w, "implied rate, %d bytes on %s: %s\n", r.Size, r.Medium, r.Error)
		return
	}
	mb := func(bps float64) string { return strconv.FormatFloat(bps/1e6, 'f', 2, 64) + " Mbit/s" }
	fmt.Fprintf(w, "implied rate, %d bytes on %s (%s): median RTT %.3f ms -> %s (%.1f %% of the medium); %s counted without the inter-frame gap\n",
		r.Size, r.Medium, linerate.MediumRate(r.MediumBPS), r.RTTP50S*1e3, mb(r.ImpliedBPS), r.Share*100, mb(r.ImpliedNoGap))
	if !explain {
		return
	}
	n := len(r.Steps)
	for i, s := range r.Steps {
		fmt.Fprintf(w, "  %d) %s\n", i+1, s)
	}
	fmt.Fprintf(w, "  %d) request and reply are the same size: the wire alone needs 2 × %s bytes = %.3f ms per round trip\n",
		n+1, pingNum(r.WireBytes), r.RoundTripWireS*1e3)
	fmt.Fprintf(w, "  %d) each direction gets half the measured round trip: %s bytes × 8 / (%.3f ms / 2) = %s\n",
		n+2, pingNum(r.WireBytes), r.RTTP50S*1e3, mb(r.ImpliedBPS))
	fmt.Fprintf(w, "  %d) counted without the inter-frame gap (IP data and headers, Ethernet header, preamble and FCS per packet): %s bytes -> %s\n", n+3, pingNum(r.NoGapBytes), mb(r.ImpliedNoGap))
	if rest := r.RTTP50S - r.RoundTripWireS; rest >= 0 {
		fmt.Fprintf(w, "  %d) the rest of the round trip, %.3f ms, is the host's own time and store-and-forward hops: why it is below %s\n",
			n+4, rest*1e3, linerate.MediumRate(r.MediumBPS))
	} else {
		fmt.Fprintf(w, "  %d) the round trip is %.3f ms shorter than the wire alone allows: this path is not a %s link all the way\n",
			n+4, -rest*1e3, linerate.MediumRate(r.MediumBPS))
	}
}

// PingSummary is a ping run's line in `history`.
func PingSummary(r *result.PingRun) string {
	var parts []string
	for _, s := range r.Sizes {
		part := fmt.Sprintf("%d B %d/%d", s.Size, s.Received, s.Sent)
		if s.Received > 0 {
			part += fmt.Sprintf(" avg %.3f ms", float64(s.RTT.Avg)/1e6)
		}
		parts = append(parts, part)
	}
	if len(parts) > 4 {
		parts = append(parts[:4], fmt.Sprintf("… %d sizes", len(r.Sizes)))
	}
	return strings.Join(parts, ", ")
}

// pingNum prints v with as many digits as it needs.
func pingNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
