//go:build linux

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/netlab"
)

// TestRFC2544WirebenchLab runs `rfc2544 --mode wirebench` from lab host A
// to a wirebench server in B (a namespace on this host, so one clock):
// B's address is not one of A's, but it is found in B's namespace, so
// without --same-clock the latency test reports one-way latency and says
// the clock was found; with it, one-way latency because the user says so.
// (--same-clock=false, delay variation only, is sameClockChoice's unit
// test: the flag's "given as false" reaches it from the flag parsing.) The medium is eth10 on an unshaped lab, so the
// throughput search finds an NDR however loaded the machine; how long a
// transit took is not checked.
func TestRFC2544WirebenchLab(t *testing.T) {
	lab, host := latencyLab(t, netlab.Config{Name: "rfcowd"})
	for _, tc := range []struct {
		flags            []string
		kind, clock, why string
	}{
		{nil, "one_way", "shared", "found: " + lab.B.Addr.String() + " is an address in lab namespace "},
		{[]string{"--same-clock"}, "one_way", "shared", "--same-clock"},
	} {
		args := append([]string{"rfc2544", host, "--mode", "wirebench", "--medium", "eth10", "--sizes", "1472", "--tests", "latency",
			"--loads", "50", "--trial", "300ms", "--confirm", "500ms", "--gap", "100ms", "--json", "--no-save"}, tc.flags...)
		var out, errb bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err := lab.A.Do(func() error {
			if code := run(ctx, args, &out, &errb); code != 0 {
				t.Errorf("%v: exit %d: %s", tc.flags, code, errb.String())
			}
			return nil
		})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Test struct {
				Clock    string `json:"clock"`
				ClockWhy string `json:"clock_why"`
			} `json:"test"`
			Sizes []struct {
				LatencyNote string `json:"latency_note"`
				Latency     []struct {
					Kind  string  `json:"kind"`
					Timed int64   `json:"timed"`
					Min   float64 `json:"min_ms"`
					P50   float64 `json:"p50_ms"`
					Max   float64 `json:"max_ms"`
				} `json:"latency"`
			} `json:"sizes"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Sizes) != 1 {
			t.Fatalf("%v: %v\n%s", tc.flags, err, out.String())
		}
		t.Logf("%v: clock %s (%s); %+v", tc.flags, doc.Test.Clock, doc.Test.ClockWhy, doc.Sizes[0].Latency)
		if doc.Test.Clock != tc.clock || !strings.Contains(doc.Test.ClockWhy, tc.why) {
			t.Errorf("%v: clock %q (%s), want %q (%s)", tc.flags, doc.Test.Clock, doc.Test.ClockWhy, tc.clock, tc.why)
		}
		pts := doc.Sizes[0].Latency
		if len(pts) != 1 || pts[0].Kind != tc.kind || pts[0].Timed < 2 || pts[0].Min < 0 || pts[0].P50 < pts[0].Min || pts[0].Max < pts[0].P50 {
			t.Errorf("%v: points %+v (%s), want one %s point with ordered figures", tc.flags, pts, doc.Sizes[0].LatencyNote, tc.kind)
		}
		if tc.kind == "delay_variation" && len(pts) == 1 && pts[0].Min != 0 {
			t.Errorf("delay variation min %v, want 0 (the minimum subtracted)", pts[0].Min)
		}
	}
}
