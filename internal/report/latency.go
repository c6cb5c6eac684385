package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// WriteLatency writes a request/response latency test as text: what was
// probed, the counts, one RTT row and the warnings.
func WriteLatency(w io.Writer, r *result.Latency) error {
	var b strings.Builder
	what := r.Test.Proto + " echo"
	if r.Test.Proto == result.ProbeConnect {
		what = "tcp connect"
	}
	fmt.Fprintf(&b, "latency: %s to %s", what, r.Test.Peer)
	if r.Test.Size > 0 {
		fmt.Fprintf(&b, ", %d-byte messages", r.Test.Size)
	}
	fmt.Fprintf(&b, ", interval %s\n", intervalText(r.Test.Interval))
	fmt.Fprintf(&b, "  sent %d, answered %d, timeouts %d, late %d, errors %d, loss %.2f %%; %.0f answered/s over %.3f s\n",
		r.Sent, r.Received, r.Timeouts, r.Late, r.Errors, r.LossPct, r.RequestsPerSecond, r.Seconds)
	b.WriteString(rttHeader("  rtt"))
	b.WriteString(rttRow("", r.RTT))
	for _, wng := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wng)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteUnderLoad writes the latency probe of a test run beside a load as
// text: the probe, the idle and loaded RTT rows, the change of the median
// and the warnings. The load's own result (lat.Throughput) is the caller's
// to print, before this.
func WriteUnderLoad(w io.Writer, lat *result.UnderLoad) error {
	var b strings.Builder
	p := lat.Probe
	fmt.Fprintf(&b, "latency: %s probe to %s every %s, %d-byte %s", p.Proto, p.Peer,
		intervalText(p.Interval), p.Size, map[string]string{result.ProbeUDP: "messages", result.ProbeICMP: "payloads"}[p.Proto])
	if p.Socket != "" {
		fmt.Fprintf(&b, " (%s socket)", p.Socket)
	}
	b.WriteString("\n")
	b.WriteString(rttHeader(""))
	b.WriteString(statsRow("idle", lat.Idle))
	b.WriteString(statsRow("loaded", lat.Loaded))
	if lat.Idle.RTT.Count > 0 && lat.Loaded.RTT.Count > 0 {
		fmt.Fprintf(&b, "under load the median RTT changed by %+.3f ms (%.3f → %.3f ms)\n",
			lat.Loaded.RTT.P50-lat.Idle.RTT.P50, lat.Idle.RTT.P50, lat.Loaded.RTT.P50)
	}
	for _, wng := range lat.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wng)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// UnderLoadSummary is what a latency probe adds to its test's one-line
// summary in history: the idle and loaded median RTT, or nothing when
// either phase had no reply.
func UnderLoadSummary(lat *result.UnderLoad) string {
	if lat.Idle.RTT.Count == 0 || lat.Loaded.RTT.Count == 0 {
		return ""
	}
	return fmt.Sprintf(", rtt p50 %.3f ms idle, %.3f ms loaded", lat.Idle.RTT.P50, lat.Loaded.RTT.P50)
}

// LatencySummary is a latency test's one-line summary in history: the
// protocol, the requests answered and, when any was, the median RTT.
func LatencySummary(r *result.Latency) string {
	sum := fmt.Sprintf("%s echo, %d/%d answered", r.Test.Proto, r.Received, r.Sent)
	if r.RTT.Count > 0 {
		sum += fmt.Sprintf(", rtt p50 %.3f ms", r.RTT.P50)
	}
	return sum
}

// intervalText spells a probe interval in seconds; 0 is back to back.
func intervalText(s float64) string {
	if s == 0 {
		return "0 (back to back)"
	}
	return time.Duration(s * float64(time.Second)).String()
}

func rttHeader(label string) string {
	return fmt.Sprintf("%-8s %7s %7s %9s %9s %9s %9s %9s %9s %9s %9s  (ms)\n",
		label, "count", "loss", "min", "p50", "p90", "p99", "p99.9", "max", "mean", "stddev")
}

func rttRow(label string, s result.RTTSummary) string {
	return fmt.Sprintf("%-8s %7d %7s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n",
		label, s.Count, "", s.Min, s.P50, s.P90, s.P99, s.P999, s.Max, s.Mean, s.StdDev)
}

func statsRow(label string, st result.RTTStats) string {
	s := st.RTT
	return fmt.Sprintf("%-8s %7d %6.2f%% %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n",
		label, s.Count, st.LossPct, s.Min, s.P50, s.P90, s.P99, s.P999, s.Max, s.Mean, s.StdDev)
}
