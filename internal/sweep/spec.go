package sweep

// The spelling of a sweep's sizes and loss on the command line, and where
// its searches start.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/linerate"
)

// RFC2544Frames are RFC 2544's Ethernet frame sizes (§9.1).
var RFC2544Frames = []int{64, 128, 256, 512, 1024, 1280, 1518}

// ParseSizes reads --sizes: a list (64,512,1470), a range with an
// optional step (64-1472:64) or rfc2544 (RFC 2544's frame sizes as UDP
// payloads on medium m), sorted and without repeats.
func ParseSizes(s string, m linerate.Medium) ([]int, error) {
	if s == "rfc2544" {
		l2 := m.Header + m.FCS
		if m.Kind == linerate.Custom {
			l2 = m.Overhead
		}
		var out []int
		for _, fr := range RFC2544Frames {
			if p := fr - l2 - 28; p >= 16 {
				out = append(out, p)
			}
		}
		return out, nil
	}
	bad := fmt.Errorf("invalid --sizes %q: want a list like 64,512,1470, a range like 64-1472:64, or rfc2544 (sizes 16 to 65507)", s)
	var out []int
	if a, b, ok := strings.Cut(s, "-"); ok {
		step := 1
		if bb, st, ok := strings.Cut(b, ":"); ok {
			b = bb
			var err error
			if step, err = strconv.Atoi(st); err != nil || step < 1 {
				return nil, bad
			}
		}
		lo, err1 := strconv.Atoi(a)
		hi, err2 := strconv.Atoi(b)
		if err1 != nil || err2 != nil || lo > hi || (hi-lo)/step > 1000 {
			return nil, bad
		}
		for v := lo; v <= hi; v += step {
			out = append(out, v)
		}
		if out[len(out)-1] != hi {
			out = append(out, hi)
		}
	} else {
		for _, p := range strings.Split(s, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return nil, bad
			}
			out = append(out, v)
		}
	}
	for _, v := range out {
		if v < 16 || v > 65507 {
			return nil, bad
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ParseLossPercent reads "0", "0.1%" or "0.1" as percent.
func ParseLossPercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || v < 0 || v >= 100 || math.IsNaN(v) {
		return 0, fmt.Errorf("invalid percentage %q", s)
	}
	return v, nil
}

// UDPLinePPS is the medium's maximum packet rate per UDP payload size (0
// for a size it cannot carry): where a sweep's and RFC 2544's searches
// start.
func UDPLinePPS(m linerate.Medium) func(size int) float64 {
	return func(size int) float64 {
		b, err := linerate.Analyze(m, linerate.Stack{Transport: linerate.UDP}, size)
		if err != nil {
			return 0
		}
		return b.PacketsPerSecond
	}
}
