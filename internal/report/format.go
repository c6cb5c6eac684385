package report

import (
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/units"
)

// na is printed in place of a figure that cannot be computed honestly.
const na = "n/a"

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// bitsText formats a bit rate in the -f unit (0 = adaptive), or n/a when the span it was measured over is
// empty or the value is not a finite, non-negative number.
func bitsText(bps, secs float64, unit byte) string {
	if !finite(bps) || bps < 0 || !(secs > 0) || !finite(secs) {
		return na
	}
	return units.FormatRateIn(bps, unit)
}

// bytesText formats a byte count for the -f unit (0 = adaptive), or n/a for a negative one.
func bytesText(n int64, unit byte) string {
	if n < 0 {
		return na
	}
	return units.FormatBytesIn(float64(n), unit)
}

// spanText formats an interval "0.00-1.00" of seconds, or n/a when the
// bounds are not finite or not in order.
func spanText(start, end float64) string {
	if !finite(start) || !finite(end) || start < 0 || end < start {
		return na
	}
	return fmt.Sprintf("%.2f-%.2f", start, end)
}

// rateOf returns n/secs, or false when that is not a meaningful rate.
func rateOf(n int64, secs float64) (float64, bool) {
	if n < 0 || !(secs > 0) || !finite(secs) {
		return 0, false
	}
	r := float64(n) / secs
	return r, finite(r)
}

// ppsText formats a packet rate: given when it is a positive finite
// number, else computed from n packets over secs, else n/a.
func ppsText(given float64, n int64, secs float64) string {
	if finite(given) && given > 0 {
		return fmt.Sprintf("%.0f pps", given)
	}
	if r, ok := rateOf(n, secs); ok {
		return fmt.Sprintf("%.0f pps", r)
	}
	return na + " pps"
}

// jitterText formats a jitter in milliseconds with iperf's three decimals.
func jitterText(ms float64) string {
	if !finite(ms) || ms < 0 {
		return na
	}
	return fmt.Sprintf("%.3f ms", ms)
}

// lossText formats "lost/total (pct%)". A negative lost (an interval in
// which datagrams counted lost earlier arrived late) is shown as 0: those
// datagrams are in the out-of-order count. A total of zero has no
// percentage.
func lossText(lost, total int64) string {
	if lost < 0 {
		lost = 0
	}
	if total <= 0 {
		return fmt.Sprintf("%d/%d (%s)", lost, max(total, 0), na)
	}
	return fmt.Sprintf("%d/%d (%s%%)", lost, total, percentText(100*float64(lost)/float64(total)))
}

// percentText formats a percentage the way iperf does: "0", "3.9", "50",
// "0.012", never in exponent form.
func percentText(p float64) string {
	switch {
	case !finite(p) || p < 0:
		return na
	case p == 0:
		return "0"
	case p >= 1:
		return strings.TrimSuffix(strconv.FormatFloat(p, 'f', 1, 64), ".0")
	}
	two, _ := strconv.ParseFloat(strconv.FormatFloat(p, 'g', 2, 64), 64)
	return strconv.FormatFloat(two, 'f', -1, 64)
}

// thousands formats a non-negative number rounded to an integer with comma
// separators: 8,138.
func thousands(v float64) string {
	if !finite(v) || v < 0 {
		return na
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// siScale returns the SI divisor and prefix that puts v between 1 and
// 1000, for printing several rates in one unit.
func siScale(v float64) (float64, string) {
	div, prefixes := 1.0, []string{"", "K", "M", "G", "T"}
	i := 0
	for math.Abs(v)/div >= 1000 && i < len(prefixes)-1 {
		div *= 1000
		i++
	}
	return div, prefixes[i]
}

// fixed formats v/div with two decimals, or n/a.
func fixed(v, div float64) string {
	if !finite(v) || v < 0 {
		return na
	}
	return fmt.Sprintf("%.2f", v/div)
}

// hostPort splits "host:port" into the words iperf prints: "127.0.0.1 port
// 5001". Anything else is printed as it is.
func hostPort(addr string) string {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h + " port " + p
}

// idText puts a line id in iperf's brackets: "[  1]", "[SUM]".
func idText(id string) string { return fmt.Sprintf("[%3s]", id) }
