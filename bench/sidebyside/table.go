package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wirebench/wirebench/internal/units"
)

// toolOrder is the column order of the table.
var toolOrder = []string{Wirebench, Iperf2, Iperf3}

// writeTable prints the report as plain-text tables.
func writeTable(out io.Writer, rep *Report) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	p := rep.Plan
	fmt.Fprintf(out, "wirebench side by side with iperf 2 and iperf3 on 127.0.0.1 (%s mode, %.0f s, %d CPUs, load %s -> %s)\n",
		p.Mode, rep.Seconds, rep.CPUs, orDash(rep.Load[0]), orDash(rep.Load[1]))
	for _, name := range toolOrder {
		if v, ok := rep.Versions[name]; ok {
			fmt.Fprintf(out, "  %s: %s\n", name, v)
		}
	}

	writeLossFree(out, w, rep)
	writeLossFreeParallel(out, w, rep)
	writeMaxSend(out, w, rep)
	writeTCP(out, w, rep)
	writeCPU(out, w, rep)
	writePacing(out, w, rep)
	if m := rep.Many; m != nil {
		writeMany(out, m)
	}
	writeErrors(out, rep)
}

// writeLossFree prints the loss-free UDP rates, if the report has any.
func writeLossFree(out io.Writer, w *tabwriter.Writer, rep *Report) {
	if len(rep.LossFree) == 0 {
		return
	}
	p := rep.Plan
	fmt.Fprintf(out, "\nLoss-free UDP rate: received datagrams/s of the best trial with <= %.1f %% loss (binary search, %d s trials, at most %d; the sender must send >= %.0f %% of the rate offered)\n",
		LossLimit*100, p.TrialSeconds, p.SearchTrials, OfferedShare*100)
	fmt.Fprintln(w, "bytes\twirebench\tiperf2\tiperf3\tours/best\ttrials (wb/i2/i3)\t")
	capped := false
	best := func(s Search) string { return bestText(s, &capped) }
	for _, r := range rep.LossFree {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t\n", r.Length, best(r.Tools[Wirebench]), best(r.Tools[Iperf2]), best(r.Tools[Iperf3]),
			ratioText(r.Ratio), fmt.Sprintf("%d/%d/%d", len(r.Tools[Wirebench].Trials), len(r.Tools[Iperf2].Trials), len(r.Tools[Iperf3].Trials)))
	}
	w.Flush()
	if capped {
		fmt.Fprintln(out, "  * no loss at the tool's own highest send rate: the figure is its sender's limit, its receiver may take more")
	}
}

// writeLossFreeParallel prints the loss-free UDP rates with several
// streams, if the report has any.
func writeLossFreeParallel(out io.Writer, w *tabwriter.Writer, rep *Report) {
	if len(rep.LossFreeParallel) == 0 {
		return
	}
	fmt.Fprintf(out, "\nLoss-free UDP rate with -P %d: the same search, the rate offered split over the streams; received datagrams/s and loss summed over the streams (iperf 2: -b is each stream's, its server's CSV lines summed; no iperf3)\n",
		ParallelUDP)
	fmt.Fprintln(w, "bytes\twirebench\tiperf2\tours/iperf2\ttrials (wb/i2)\t")
	capped := false
	best := func(s Search) string { return bestText(s, &capped) }
	for _, r := range rep.LossFreeParallel {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t\n", r.Length, best(r.Tools[Wirebench]), best(r.Tools[Iperf2]),
			ratioText(r.Ratio), fmt.Sprintf("%d/%d", len(r.Tools[Wirebench].Trials), len(r.Tools[Iperf2].Trials)))
	}
	w.Flush()
	if capped {
		fmt.Fprintln(out, "  * no loss at the tool's own highest send rate with these streams: the figure is its sender's limit")
	}
}

// writeMaxSend prints the highest paced send rates, if the report has any.
func writeMaxSend(out io.Writer, w *tabwriter.Writer, rep *Report) {
	if len(rep.MaxSend) == 0 {
		return
	}
	fmt.Fprintf(out, "\nHighest paced send rate: datagrams/s the client sent when asked for %s/s (its own count; received and loss by the server)\n", pps(AskPPS))
	fmt.Fprintln(w, "bytes\twirebench\tiperf2\tiperf3\tours/best\twb rx / loss\ti2 rx / loss\ti3 rx / loss\t")
	for _, r := range rep.MaxSend {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s", r.Length, pps(r.Tools[Wirebench].SentPPS), pps(r.Tools[Iperf2].SentPPS), pps(r.Tools[Iperf3].SentPPS), ratioText(r.Ratio))
		for _, name := range toolOrder {
			t, ok := r.Tools[name]
			switch {
			case !ok:
				fmt.Fprint(w, "\t-")
			case t.Error != "":
				fmt.Fprint(w, "\tfailed")
			default:
				fmt.Fprintf(w, "\t%s / %.1f%%", pps(t.RecvPPS), t.Loss*100)
			}
		}
		fmt.Fprint(w, "\t\n")
	}
	w.Flush()
}

// writeTCP prints the TCP rates, if the report has any.
func writeTCP(out io.Writer, w *tabwriter.Writer, rep *Report) {
	if len(rep.TCP) == 0 {
		return
	}
	p := rep.Plan
	fmt.Fprintf(out, "\nTCP: the receiver's Gbit/s, median of %d interleaved rounds of %d s (wirebench, iperf2, iperf3, wirebench, ...)\n", p.TCPRounds, p.TCPSeconds)
	fmt.Fprintln(w, "streams\twirebench\tiperf2\tiperf3\tours/best\t")
	for _, r := range rep.TCP {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t\n", r.Streams, gbit(r.Tools[Wirebench].MedianBPS), gbit(r.Tools[Iperf2].MedianBPS), gbit(r.Tools[Iperf3].MedianBPS), ratioText(r.Ratio))
	}
	w.Flush()
}

// writeCPU prints the CPU seconds per GB, if the report has any.
func writeCPU(out io.Writer, w *tabwriter.Writer, rep *Report) {
	if len(rep.CPU) == 0 {
		return
	}
	fmt.Fprintln(out, "\nCPU seconds per GB received (user+system of client and server; below 1 in ours/best: wirebench spends less)")
	fmt.Fprintln(w, "test\twirebench\tiperf2\tiperf3\tours/best\t")
	for _, r := range rep.CPU {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t\n", r.Test, cpuText(r.Tools[Wirebench]), cpuText(r.Tools[Iperf2]), cpuText(r.Tools[Iperf3]), ratioText(r.Ratio))
	}
	w.Flush()
}

// writePacing prints the pacing errors, if the report has any.
func writePacing(out io.Writer, w *tabwriter.Writer, rep *Report) {
	if len(rep.Pacing) == 0 {
		return
	}
	p := rep.Plan
	fmt.Fprintf(out, "\nPacing: %d-byte datagrams for %d s; achieved = the receiver's own goodput figure; error = achieved vs asked\n", p.PaceLength, p.PaceSeconds)
	fmt.Fprintln(w, "asked\twirebench\terr\tiperf2\terr\tiperf3\terr\t")
	for _, r := range rep.Pacing {
		fmt.Fprintf(w, "%s", rateText(r.RateBPS))
		for _, name := range toolOrder {
			s, ok := r.Tools[name]
			switch {
			case s.Error != "":
				fmt.Fprint(w, "\tfailed\t-")
				continue
			case !ok:
				fmt.Fprint(w, "\t-\t-")
				continue
			}
			fmt.Fprintf(w, "\t%s\t%+.2f%%", rateText(s.AchievedBPS), s.ErrorPct)
		}
		fmt.Fprint(w, "\t\n")
	}
	w.Flush()
}

// writeErrors prints the tests that failed, if the report has any.
func writeErrors(out io.Writer, rep *Report) {
	if len(rep.Errors) == 0 {
		return
	}
	fmt.Fprintf(out, "\n%s failed (their figures are missing above, never guessed):\n", units.Plural(len(rep.Errors), "test"))
	for _, e := range rep.Errors {
		fmt.Fprintln(out, "  "+strings.ReplaceAll(e, "\n", " "))
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// pps formats datagrams/s: "292 k", "1.49 M".
func pps(v float64) string { return scaled(v, 3, "", " k", " M", " M") }

// rateText formats bit/s: "100 Mbit/s".
func rateText(v float64) string { return scaled(v, 4, " bit/s", " kbit/s", " Mbit/s", " Gbit/s") }

// scaled writes v > 0 with digits significant digits in the unit of its
// size: one, thousands, millions, billions; "-" for v <= 0.
func scaled(v float64, digits int, one, k, m, g string) string {
	switch {
	case v <= 0:
		return "-"
	case v >= 1e9 && g != m:
		return fmt.Sprintf("%.*g%s", digits, v/1e9, g)
	case v >= 1e6:
		return fmt.Sprintf("%.*g%s", digits, v/1e6, m)
	case v >= 1e3:
		return fmt.Sprintf("%.*g%s", digits, v/1e3, k)
	}
	return fmt.Sprintf("%.0f%s", v, one)
}

func gbit(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v/1e9)
}

func ratioText(r float64) string {
	if r <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", r)
}

func cpuText(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// writeMany prints the many-clients row.
func writeMany(out io.Writer, m *ManyRow) {
	p := m.Plan
	fmt.Fprintf(out, "\nMany clients: one wirebench server, %d clients at once (each from its own 127.x address, nice 10) for %d s: "+
		"%d iperf 2 UDP at %s, %d iperf 2 TCP and %d iperf3 TCP at %s\n", p.UDP+p.TCP+p.Iperf3, p.Seconds,
		p.UDP, rateText(p.UDPBPS), p.TCP, p.Iperf3, rateText(p.TCPBPS))
	if m.Error != "" {
		fmt.Fprintf(out, "  failed: %s\n", m.Error)
		return
	}
	fmt.Fprintf(out, "  completed: UDP %d/%d with the server report (%d \"did not receive ack\"), TCP %d/%d, iperf3 %d/%d\n",
		m.UDPReports, p.UDP, m.UDPNoAck, m.TCPDone, p.TCP, m.Iperf3Done, p.Iperf3)
	fmt.Fprintf(out, "  server: %d UDP results (%d ended without a FIN), %d TCP results; its UDP socket dropped %d datagrams\n",
		m.ServerUDP, m.ServerIdle, m.ServerTCP, m.SocketDrops)
	fmt.Fprintf(out, "  server memory: peak RssAnon %.1f MiB; goroutines %d idle, %d after\n",
		float64(m.PeakRssAnonKiB)/1024, m.GoroutinesIdle, m.GoroutinesAfter)
	for _, kind := range []string{"udp", "tcp", "iperf3"} {
		if s, ok := m.Failed[kind]; ok {
			fmt.Fprintf(out, "  first %s client that did not complete: %s\n", kind, strings.ReplaceAll(s, "\n", " | "))
		}
	}
}

// bestText is a search's best rate, marked * (and capped set) when the
// first trial, at the tool's own highest send rate, already passed.
func bestText(s Search, capped *bool) string {
	if s.Bound == boundPassed && s.BestPPS > 0 {
		*capped = true
		return pps(s.BestPPS) + " *"
	}
	return pps(s.BestPPS)
}
