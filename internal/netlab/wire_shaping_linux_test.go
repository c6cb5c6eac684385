//go:build linux && netlab

// Exact-wire accuracy checks (Config.Wire = WireExact), lab tier like
// shaping_linux_test.go:
//
//	go test -tags netlab -run 'Exact|Shaping' -v ./internal/netlab/

package netlab

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"
)

// pingWire is the least RTT of a 65,500-byte ping across a 100 Mbit/s
// wire shaped both ways: 45 fragments, 67,578 bytes of wire time each way
// (44 of 1514 bytes + one of 938, each + 24), 5.406 ms at 100 Mbit/s.
const pingWire = 2 * 67578 * 8 / 100e6 * float64(time.Second)

// TestExactWirePing65500: with the exact wire, `ping -s 65500` reads a
// median RTT of at least the two wire times (10.81 ms) and within +10 %
// of it. The tbf recipe (router, both ways) is measured too, for the
// comparison, and only logged: its 1 ms bucket lets a burst after idle
// leave at veth speed.
func TestExactWirePing65500(t *testing.T) {
	requireLab(t)
	for _, w := range []Wire{WireExact, WireTBF} {
		t.Run(w.String(), func(t *testing.T) {
			l := newLab(t, Config{Name: "exactping", RateBPS: shapeRate, Router: true, ShapeBothWays: true, Wire: w})
			med, rtts := pingMedian(t, l, 20)
			t.Logf("%s; %s wire: ping -s 65500 median %.3f ms over %d replies (min %.3f, max %.3f), wire minimum %.3f ms",
				loadAvg(), w, med, len(rtts), rtts[0], rtts[len(rtts)-1], pingWire/1e6)
			for _, s := range l.WireStats() {
				t.Logf("%v", s)
			}
			if w != WireExact {
				return
			}
			if med < pingWire/1e6 || med > 1.1*pingWire/1e6 {
				t.Fatalf("median RTT %.3f ms, want %.3f to %.3f ms", med, pingWire/1e6, 1.1*pingWire/1e6)
			}
		})
	}
}

var rttRE = regexp.MustCompile(`time=([0-9.]+) ms`)

// pingMedian runs the system ping (65,500 bytes, n echoes 200 ms apart)
// from A to B and returns the median RTT in ms and the sorted RTTs.
func pingMedian(t *testing.T, l *Lab, n int) (float64, []float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(n)*time.Second+10*time.Second)
	defer cancel()
	out, err := l.A.Command(ctx, "ping", "-s", "65500", "-c", strconv.Itoa(n), "-i", "0.2", "-W", "3", l.B.Addr.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("ping: %v\n%s", err, out)
	}
	var rtts []float64
	for _, m := range rttRE.FindAllStringSubmatch(string(out), -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("ping output %q: %v", m[0], err)
		}
		rtts = append(rtts, v)
	}
	if len(rtts) < n/2 {
		t.Fatalf("only %d of %d replies:\n%s", len(rtts), n, out)
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2], rtts
}
