package session

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// TestDroppedDatagrams: a socket's drop count is datagrams without receive
// offload, and a lower bound (packets of coalesced datagrams) with it.
func TestDroppedDatagrams(t *testing.T) {
	if got := DroppedDatagrams(12, false); got != "12 datagrams" {
		t.Errorf("without offload: %q", got)
	}
	if got := DroppedDatagrams(12, true); !strings.HasPrefix(got, "at least 12 datagrams (12 packets") {
		t.Errorf("with offload: %q", got)
	}
}

// TestWarnSenderQueueHeldOrStalled: a UDP sender at 95.7 % of the 100
// Mbit/s asked whose time behind schedule went into send calls (this
// host's egress queue held it back) gets no warning, and its result says
// the rate the link took; the same shortfall from time outside send calls,
// or from waiting for a CPU inside them, keeps the warnings.
func TestWarnSenderQueueHeldOrStalled(t *testing.T) {
	cfg := &ClientConfig{UDP: true, Rate: units.Rate{Value: 100e6}, Length: 1470, Duration: 10 * time.Second}
	want := cfg.PPS()
	span := 10 * time.Second
	for _, tc := range []struct {
		name string
		b    engine.Behind
		held bool
	}{
		{"queue", engine.Behind{InSend: 9900 * time.Millisecond, Stalled: 20 * time.Millisecond, MaxStall: 3 * time.Millisecond,
			HeldPackets: 8138 * 9, HeldSpan: 9 * time.Second}, true},
		{"stalled", engine.Behind{InSend: 9500 * time.Millisecond, Stalled: 400 * time.Millisecond, MaxStall: 130 * time.Millisecond,
			HeldPackets: 8138 * 9, HeldSpan: 9 * time.Second}, false},
		{"cpu wait in send", engine.Behind{InSend: 9900 * time.Millisecond, InSendRunDelay: 300 * time.Millisecond, RunDelayKnown: true,
			HeldPackets: 8138 * 9, HeldSpan: 9 * time.Second}, false},
		{"never blocked", engine.Behind{InSend: time.Millisecond, MaxStall: 900 * time.Microsecond}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := result.New("client")
			snd := &result.Sender{Packets: int64(0.957 * want * span.Seconds()), Seconds: span.Seconds(), PacketsPerSecond: 0.957 * want}
			WarnSender(r, cfg, snd, 420*time.Millisecond, &tc.b, span)
			warned := strings.Contains(strings.Join(r.Warnings, "\n"), "not tested at the requested rate")
			if snd.Behind == nil || snd.Behind.QueueHeld != tc.held || warned == tc.held {
				t.Fatalf("held %v: behind %+v, warnings %q", tc.held, snd.Behind, r.Warnings)
			}
			if tc.held {
				if got := snd.Behind.TakenBPS; math.Abs(got-8138*1470*8) > 1 {
					t.Errorf("taken %.0f bit/s, want 8138 datagrams/s of 1470 bytes", got)
				}
				if len(r.Warnings) != 0 {
					t.Errorf("a sender the queue held back got warnings %q", r.Warnings)
				}
			}
		})
	}
}

// TestWarnSenderSaysItsPriority: a stalled sender that ran at normal
// priority says so once, with what to do, however many stall warnings it
// gets; one that ran real-time says nothing of it.
func TestWarnSenderSaysItsPriority(t *testing.T) {
	cfg := &ClientConfig{UDP: true, Rate: units.Rate{Value: 100e6}, Length: 1470, Duration: 10 * time.Second}
	b := engine.Behind{InSend: time.Millisecond, Stalled: 400 * time.Millisecond, MaxStall: 130 * time.Millisecond}
	for pacing, want := range map[string]bool{
		"normal priority: not permitted (run as root, or grant CAP_SYS_NICE, e.g. setcap cap_sys_nice+ep on the binary)": true,
		"real-time (SCHED_FIFO, at most 50 % of a core), its buffers locked in RAM":                                      false,
	} {
		r := result.New("client")
		snd := &result.Sender{Packets: int64(0.9 * cfg.PPS() * 10), Seconds: 10, PacketsPerSecond: 0.9 * cfg.PPS(), Pacing: pacing}
		WarnSender(r, cfg, snd, 130*time.Millisecond, &b, 10*time.Second)
		all := strings.Join(r.Warnings, "\n")
		if len(r.Warnings) != 2 || strings.Contains(all, "CAP_SYS_NICE") != want || strings.Count(all, "the sender ran at") != map[bool]int{true: 1}[want] {
			t.Errorf("%s: warnings %q", pacing, r.Warnings)
		}
	}
}

// TestSumReceiverFirstByte: a test's first byte is its earliest stream's,
// and a stream that does not know its own leaves the sum's alone.
func TestSumReceiverFirstByte(t *testing.T) {
	var sum result.Receiver
	for _, fb := range []float64{0.012, 0, 0.004, 0.009} {
		SumReceiver(&sum, &result.Receiver{Bytes: 10, Source: "local", FirstByteSeconds: fb})
	}
	if sum.FirstByteSeconds != 0.004 || sum.Bytes != 40 {
		t.Fatalf("sum first byte %v s, %d bytes; want 0.004 s, 40 bytes", sum.FirstByteSeconds, sum.Bytes)
	}
}
