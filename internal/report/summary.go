package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// Summary prints the final lines of a test: the sender line; the receiver
// line with lost/total (loss %), out-of-order, duplicates, jitter and
// packets/s, under "Server Report:" when the counts came from the peer;
// per-stream lines and a SUM line when the test had several streams; the
// reverse flow when there was one; the figures against the medium's line
// rate when a medium was named; then every warning as a "WARNING:" line
// and the error as an "ERROR:" line, last, so they cannot be missed.
func (t *Text) Summary(r *result.Result) {
	var b strings.Builder
	if r == nil {
		b.WriteString("ERROR: no result to report\n")
		t.write(&b)
		return
	}
	udp := r.Test.Protocol == result.UDP
	t.sides(&b, udp, r.Sender, r.Receiver, r.Streams)
	if f := r.Reverse; f != nil {
		fmt.Fprintf(&b, "%s Reverse flow (this side: %s):\n", idText(t.id), orNA(f.Direction))
		t.sides(&b, udp, f.Sender, f.Receiver, nil)
	}
	if r.Link != nil {
		linkLines(&b, t.id, r.Link)
	}
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
// per-stream lines and a SUM line when streams has more than one entry.
func (t *Text) sides(b *strings.Builder, udp bool, s *result.Sender, rcv *result.Receiver, streams []result.Stream) {
	multi := len(streams) > 1
	total := t.id
	if multi {
		total = "SUM"
	}
	if s != nil {
		t.columnHeader(b, kindOf(udp, false))
		if multi {
			for _, st := range streams {
				if st.Sender != nil {
					senderLine(b, strconv.Itoa(st.ID), udp, st.Sender)
				}
			}
		}
		senderLine(b, total, udp, s)
	}
	if rcv == nil {
		return
	}
	if rcv.Source == "peer-report" {
		fmt.Fprintf(b, "%s Server Report:\n", idText(t.id))
	}
	k := colTCP
	if udp {
		k = colUDPRecvSum
	}
	t.columnHeader(b, k)
	if multi {
		for _, st := range streams {
			if st.Receiver != nil {
				receiverLine(b, strconv.Itoa(st.ID), udp, st.Receiver)
			}
		}
	}
	receiverLine(b, total, udp, rcv)
}

// senderLine writes one sender summary and, for UDP, iperf's "Sent N
// datagrams" line.
func senderLine(b *strings.Builder, id string, udp bool, s *result.Sender) {
	common(b, id, 0, s.Seconds, s.Bytes, s.BitsPerSecond)
	if udp {
		fmt.Fprintf(b, "  %9d  %11s", s.Packets, ppsText(s.PacketsPerSecond, s.Packets, s.Seconds))
	}
	b.WriteString("  sender\n")
	var errs string
	if s.SendErrors > 0 {
		errs = fmt.Sprintf(" (%d writes refused by the kernel)", s.SendErrors)
	}
	switch {
	case udp:
		fmt.Fprintf(b, "%s Sent %d datagrams%s\n", idText(id), s.Packets, errs)
	case errs != "":
		fmt.Fprintf(b, "%s%s\n", idText(id), errs)
	}
}

// receiverLine writes one receiver summary, and a line for datagrams this
// host dropped itself when there were any.
func receiverLine(b *strings.Builder, id string, udp bool, r *result.Receiver) {
	common(b, id, 0, r.Seconds, r.Bytes, r.BitsPerSecond)
	if udp {
		total := r.Total
		if total <= 0 {
			total = r.Packets + max(r.Lost, 0)
		}
		fmt.Fprintf(b, "  %11s  %20s  %12d  %10d  %11s", jitterText(r.JitterMS), lossText(r.Lost, total),
			r.OutOfOrder, r.Duplicates, ppsText(r.PacketsPerSecond, r.Packets, r.Seconds))
	}
	b.WriteString("  receiver\n")
	if r.HostDrops > 0 {
		fmt.Fprintf(b, "%s %d datagrams dropped by this host's socket receive buffer (not by the network)\n", idText(id), r.HostDrops)
	}
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
