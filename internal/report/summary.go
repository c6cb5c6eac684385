package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// Summary prints the final lines of a test: the sender line; the receiver
// line with lost/total (loss %), out-of-order, duplicates, jitter and
// packets/s, under "Server Report:" when the counts came from the peer;
// per-stream lines and a SUM line when the test had several streams; the
// reverse flow when there was one; the figures against the medium's line
// rate when a medium was named; the socket options asked for and the CPU
// use, iperf3 style ("CPU Utilization: local ..."); then every warning as a "WARNING:" line
// and the error as an "ERROR:" line, last, so they cannot be missed.
func (t *Text) Summary(r *result.Result) {
	var b strings.Builder
	if r == nil {
		b.WriteString("ERROR: no result to report\n")
		t.write(&b)
		return
	}
	udp := r.Test.Protocol == result.UDP
	var main, rev []result.Stream
	for _, st := range r.Streams {
		if st.Flow == "reverse" {
			rev = append(rev, st)
		} else {
			main = append(main, st)
		}
	}
	// The peer's report is the server's on a client and the client's on
	// a server.
	report := "Server Report:"
	if r.Role == "server" {
		report = "Client Report:"
	}
	if o := r.Test.Omit; o > 0 && !math.IsInf(o, 0) {
		fmt.Fprintf(&b, "%s Summary without the first %s s (-O), the intervals marked (omitted):\n", idText(t.id), strconv.FormatFloat(o, 'f', -1, 64))
	}
	t.sides(&b, udp, r.Sender, r.Receiver, main, report)
	if f := r.Reverse; f != nil {
		on := ""
		if f.ListenPort != 0 && f.ListenPort != r.Test.Port {
			on = fmt.Sprintf(", to our port %d", f.ListenPort)
		}
		fmt.Fprintf(&b, "%s Reverse flow (this side: %s%s):\n", idText(t.id), orNA(f.Direction), on)
		t.sides(&b, udp, f.Sender, f.Receiver, rev, report)
	}
	if r.Link != nil {
		linkLines(&b, t.id, r.Link)
	}
	socketLine(&b, t.id, r.Test.Socket)
	cpuLine(&b, t.id, r.CPU)
	if r.Link == nil || r.Link.Diagnosis == "" {
		for _, d := range r.Diagnoses {
			fmt.Fprintf(&b, "%s Diagnosis: %s\n", idText(t.id), indentMore(d, "      "))
		}
	}
	for _, w := range r.Warnings {
		b.WriteString("WARNING: " + indentMore(w, "         ") + "\n")
	}
	if r.Error != "" {
		note := " (the figures above are partial)"
		if r.Sender == nil && r.Receiver == nil && r.Reverse == nil && len(r.Intervals) == 0 {
			note = "" // refused before it ran: there are no figures
		}
		b.WriteString("ERROR: " + indentMore(r.Error, "       ") + note + "\n")
	}
	t.write(&b)
}

// sides writes the sender and receiver summaries of one flow, with
// per-stream lines and a SUM line when streams has more than one entry;
// report heads the receiver's lines when they came from the peer.
func (t *Text) sides(b *strings.Builder, udp bool, s *result.Sender, rcv *result.Receiver, streams []result.Stream, report string) {
	multi := len(streams) > 1
	total := t.id
	if multi {
		total = "SUM"
	}
	if s != nil {
		k := t.kind(udp, false)
		t.columnHeader(b, k)
		if multi {
			for _, st := range streams {
				if st.Sender != nil {
					t.senderLine(b, strconv.Itoa(st.ID), k, st.Sender)
				}
			}
		}
		t.senderLine(b, total, k, s)
	}
	if rcv == nil {
		return
	}
	if rcv.Source == "peer-report" {
		fmt.Fprintf(b, "%s %s\n", idText(t.id), report)
	}
	k := colTCP
	if udp {
		k = colUDPRecv
	}
	t.columnHeader(b, k)
	if multi {
		for _, st := range streams {
			if st.Receiver != nil {
				t.receiverLine(b, strconv.Itoa(st.ID), udp, st.Receiver)
			}
		}
	}
	t.receiverLine(b, total, udp, rcv)
}

// senderLine writes one sender summary in the columns k and, for UDP,
// iperf's "Sent N datagrams" line; with -e a TCP sender's MSS and path MTU.
func (t *Text) senderLine(b *strings.Builder, id string, k columns, s *result.Sender) {
	udp := k == colUDPSend
	t.common(b, id, 0, s.Seconds, s.Bytes, s.BitsPerSecond)
	switch k {
	case colUDPSend:
		fmt.Fprintf(b, "  %9d  %11s", s.Packets, ppsText(s.PacketsPerSecond, s.Packets, s.Seconds))
	case colTCPEnhanced:
		tcpColumns(b, s.TCP)
	}
	b.WriteString("  sender\n")
	if k == colTCPEnhanced && s.TCP != nil {
		fmt.Fprintf(b, "%s MSS %d, path MTU %d\n", idText(id), s.TCP.MSS, s.TCP.PMTU)
	}
	var errs string
	if s.SendErrors > 0 {
		errs = fmt.Sprintf(" (%d writes refused by the kernel)", s.SendErrors)
	}
	switch {
	case udp:
		fmt.Fprintf(b, "%s Sent %d datagrams%s\n", idText(id), s.Packets, errs)
		queueHeldLine(b, id, s)
	case errs != "":
		fmt.Fprintf(b, "%s%s\n", idText(id), errs)
	}
}

// countText prints a count, or "-" when it is unknown (nil): never 0 for
// a count nobody made.
func countText(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

// receiverLine writes one receiver summary, and a line for datagrams this
// host dropped itself when there were any.
func (t *Text) receiverLine(b *strings.Builder, id string, udp bool, r *result.Receiver) {
	t.common(b, id, 0, r.Seconds, r.Bytes, r.BitsPerSecond)
	if udp {
		total := r.Total
		if total <= 0 {
			total = r.Packets + max(r.Lost, 0)
		}
		fmt.Fprintf(b, "  %11s  %20s  %12d  %10s  %11s", jitterText(r.JitterMS), lossText(r.Lost, total),
			r.OutOfOrder, countText(r.Duplicates), ppsText(r.PacketsPerSecond, r.Packets, r.Seconds))
	}
	b.WriteString("  receiver\n")
	switch r.Counting {
	case result.CountingHighestID:
		fmt.Fprintf(b, "%s The peer's Total is the highest id it saw (iperf 2): received = Total - Lost\n", idText(id))
	case result.CountingReceived:
		fmt.Fprintf(b, "%s The peer's report counts the datagrams it received (zperf), not the highest id: Total = received + Lost\n", idText(id))
	}
	if udp && r.JitterMethod != "" {
		fmt.Fprintf(b, "%s %s\n", idText(id), jitterMethodText(r.JitterMethod))
	}
	if tr := r.Transit; udp && tr != nil && tr.Count > 0 {
		fmt.Fprintf(b, "%s %s\n", idText(id), transitText(tr))
	}
	switch {
	case r.HostDrops > 0 && r.JitterMethod == result.JitterPerBatch:
		// The kernel counts a dropped GRO packet once.
		fmt.Fprintf(b, "%s at least %d datagrams dropped by this host's socket receive buffer (not by the network; with UDP GRO the kernel counts a dropped coalesced packet of up to 64 once)\n", idText(id), r.HostDrops)
	case r.HostDrops > 0:
		fmt.Fprintf(b, "%s %d datagrams dropped by this host's socket receive buffer (not by the network)\n", idText(id), r.HostDrops)
	}
}

// transitText is a receiver's one-way transit summary, with what it is
// worth: the clock offset is in the minimum, not in the variation above
// it. A minimum below zero (the sender's clock ahead of ours) is said in
// words, as the text prints no negative figure.
func transitText(tr *result.Transit) string {
	ms := func(us int64) string { return strconv.FormatFloat(float64(max(us, 0))/1e3, 'f', 3, 64) }
	lo := "min " + ms(tr.Min) + " ms"
	if tr.Min < 0 {
		lo = "the fastest arrived " + ms(-tr.Min) + " ms before its send stamp (the clocks differ)"
	}
	return fmt.Sprintf("Transit (receive time - send stamp, %d datagrams): %s, one-way latency only when both ends read one clock; "+
		"above the min, ms: p50 %s, p90 %s, p99 %s, p99.9 %s, max %s",
		tr.Count, lo, ms(tr.P50-tr.Min), ms(tr.P90-tr.Min), ms(tr.P99-tr.Min), ms(tr.P999-tr.Min), ms(tr.Max-tr.Min))
}

// jitterMethodText says how a receiver's jitter was measured.
func jitterMethodText(m string) string {
	switch m {
	case result.JitterPerBatch:
		return "Jitter from per-batch arrival times (UDP GRO: datagrams the kernel coalesced share one arrival time; --no-gro for per-datagram)"
	case result.JitterPerDatagram:
		return "Jitter from per-datagram arrival times"
	}
	return "Jitter method: " + m
}

// linkLines writes the measured goodput against what the medium allows:
// "95.69 Mbits/sec = 99.98 % of the 95.70 Mbits/sec eth100 allows; 8,138
// frames/s; L2 97.90 / L1 99.99 Mbits/sec", then the diagnosis.
func linkLines(b *strings.Builder, id string, l *result.Link) {
	th := l.TheoreticalBPS
	if !finite(th) || th <= 0 {
		fmt.Fprintf(b, "%s Link: %s: theoretical goodput %s\n", idText(id), orNA(l.Medium), na)
	} else {
		div, p := siScale(th)
		unit := " " + p + "bits/sec"
		measured := l.PercentOfTheoretical * th / 100
		pct := na
		if finite(l.PercentOfTheoretical) && l.PercentOfTheoretical >= 0 {
			pct = fmt.Sprintf("%.2f %%", l.PercentOfTheoretical)
		}
		fmt.Fprintf(b, "%s Link: %s%s = %s of the %s%s %s allows; %s frames/s; L2 %s / L1 %s%s\n",
			idText(id), fixed(measured, div), unit, pct, fixed(th, div), unit, orNA(l.Medium),
			thousands(l.FramesPerSecond), fixed(l.WireL2BPS, div), fixed(l.WireL1BPS, div), unit)
	}
	if l.Status != "" && l.Status != "ok" {
		fmt.Fprintf(b, "%s Status: %s: %s\n", idText(id), l.Status, indentMore(orNA(l.Reason), "      "))
	}
	if l.Diagnosis != "" {
		fmt.Fprintf(b, "%s Diagnosis: %s\n", idText(id), indentMore(l.Diagnosis, "      "))
	}
}

// orNA returns s, or n/a when it is empty.
func orNA(s string) string {
	if s == "" {
		return na
	}
	return s
}

// indentMore indents the continuation lines of a multi-line message.
func indentMore(s, pad string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad)
}

// socketLine writes the socket options asked for and the buffer sizes the
// kernel reported.
func socketLine(b *strings.Builder, id string, s *result.Socket) {
	if s == nil {
		return
	}
	var parts []string
	if s.RequestedBuffer > 0 {
		got := "not read back"
		if s.SendBuffer > 0 || s.ReceiveBuffer > 0 {
			got = fmt.Sprintf("send %d, receive %d bytes as the kernel reports them (Linux: double)", s.SendBuffer, s.ReceiveBuffer)
		}
		parts = append(parts, fmt.Sprintf("-w %d: %s", s.RequestedBuffer, got))
	}
	if s.MSS > 0 {
		parts = append(parts, fmt.Sprintf("MSS %d", s.MSS))
	}
	if s.TOS != nil {
		parts = append(parts, fmt.Sprintf("TOS 0x%02x", *s.TOS))
	}
	if s.TTL > 0 {
		parts = append(parts, fmt.Sprintf("TTL %d", s.TTL))
	}
	if s.NoDelay {
		parts = append(parts, "TCP_NODELAY")
	}
	if s.Bind != "" {
		parts = append(parts, "bound to "+s.Bind)
	}
	fmt.Fprintf(b, "%s Socket: %s\n", idText(id), strings.Join(parts, ", "))
}

// cpuLine writes the CPU use as iperf3 -V does: total (user/system) in
// percent of one core, here and at the peer.
func cpuLine(b *strings.Builder, id string, c *result.CPU) {
	if c == nil {
		return
	}
	pct := func(t, u, s float64) string {
		if !finite(t) || !finite(u) || !finite(s) || t < 0 || u < 0 || s < 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1f%% (%.1f%%u/%.1f%%s)", t, u, s)
	}
	fmt.Fprintf(b, "%s CPU Utilization: local %s", idText(id), pct(c.Percent, c.UserPercent, c.SystemPercent))
	if r := c.Remote; r != nil {
		fmt.Fprintf(b, ", remote %s", pct(r.Percent, r.UserPercent, r.SystemPercent))
	}
	b.WriteString(" of one core")
	if c.OtherTests > 0 {
		// The process's figure, not this test's alone: say so beside it.
		fmt.Fprintf(b, " (this whole process, with %s running alongside)", units.Plural(c.OtherTests, "other test"))
	}
	b.WriteString("\n")
}
