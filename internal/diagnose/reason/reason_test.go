package reason

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
)

// The runs below are recorded the way the runner records them, with the
// figures the lab's device models give exactly (docs/lab.md).

func medium(t *testing.T, name string) linerate.Medium {
	t.Helper()
	m, err := linerate.LookupMedium(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// wireBits is what one datagram of size bytes costs on m's line.
func wireBits(t *testing.T, m linerate.Medium, size int) float64 {
	t.Helper()
	b, err := linerate.Analyze(m, linerate.Stack{Transport: linerate.UDP}, size)
	if err != nil {
		t.Fatal(err)
	}
	return b.WireBits
}

// load is a load run of size bytes sent at sent/s of which the far end
// delivered delivered/s, holding a queue when it is the lower.
func load(id, size int, sent, delivered float64) result.DiagnosisRun {
	n := int64(sent / 2)
	got := int64(delivered / 2)
	return result.DiagnosisRun{ID: id, Purpose: result.DiagnoseLoad, Size: size, AskedPPS: sent, SentPPS: sent,
		Sent: n, Received: got, DeliveredPPS: delivered, LossPercent: 100 * float64(n-got) / float64(n),
		Queued: delivered < sent}
}

func findings(o Outcome, kind string) []result.DiagnosisFinding {
	var out []result.DiagnosisFinding
	for _, f := range o.Findings {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

func one(t *testing.T, o Outcome, kind string) result.DiagnosisFinding {
	t.Helper()
	fs := findings(o, kind)
	if len(fs) != 1 {
		t.Fatalf("%d findings of kind %s, want 1; findings %+v, cannot tell %q", len(fs), kind, o.Findings, o.CannotTell)
	}
	return fs[0]
}

func within(t *testing.T, what string, got, want, share float64) {
	t.Helper()
	if math.Abs(got-want) > share*want {
		t.Errorf("%s = %v, want %v within %.1f %%", what, got, want, 100*share)
	}
}

func cannotTell(o Outcome, word string) bool {
	for _, c := range o.CannotTell {
		if strings.Contains(c, word) {
			return true
		}
	}
	return false
}

func TestFrameRateLimitAndTick(t *testing.T) {
	var runs []result.DiagnosisRun
	for i, size := range []int{256, 512, 1024, 1470} {
		run := load(41+i, size, 10500, 7000+float64(i%2)*3-1)
		run.TickHz, run.FramesPerTick = 1000, 7
		runs = append(runs, run)
	}
	o := Reason(Input{Medium: medium(t, "eth100"), Runs: runs})
	f := one(t, o, result.FindingFrameRate)
	within(t, "frames_per_second", f.Figures["frames_per_second"], 7000, 0.001)
	if f.Confidence != result.ConfidenceHigh || len(f.EvidenceRuns) != 4 || !strings.Contains(f.Text, "the frame rate is flat at 6,999-7,002/s") {
		t.Errorf("finding %+v: want high confidence on 4 runs", f)
	}
	if len(findings(o, result.FindingByteRate)) != 0 {
		t.Errorf("a flat frame rate was also called a byte-rate limit: %+v", o.Findings)
	}
	tick := one(t, o, result.FindingTick)
	if tick.Figures["period_ms"] != 1 || tick.Figures["frames_per_tick"] != 7 {
		t.Errorf("tick figures %v, want 1 ms and 7", tick.Figures)
	}
	pf := one(t, o, result.FindingPerFrame)
	within(t, "a_us", pf.Figures["a_us"], 1e6/7000, 0.001)
	if math.Abs(pf.Figures["b_ns_per_byte"]) > 0.1 {
		t.Errorf("b = %v ns/byte, want about 0 for a flat frame rate", pf.Figures["b_ns_per_byte"])
	}
	for _, want := range []string{"frame-rate limited at 7,000 frames/s (7 per 1 ms tick)", "At 1470 bytes that caps UDP at 82.3 Mbit/s",
		"Evidence: runs 41-44 (frame rate flat at 6,999-7,002/s from 256 to 1470 B; arrivals in bursts of 7 every 1.000 ms)."} {
		if !strings.Contains(o.Verdict, want) {
			t.Errorf("verdict %q lacks %q", o.Verdict, want)
		}
	}
}

func TestFrameRateLimitWithoutTick(t *testing.T) {
	runs := []result.DiagnosisRun{load(1, 256, 10500, 7000), load(2, 1024, 10500, 7010)}
	o := Reason(Input{Medium: medium(t, "eth1g"), Runs: runs})
	one(t, o, result.FindingFrameRate)
	if len(findings(o, result.FindingTick)) != 0 || !cannotTell(o, "a timer tick") {
		t.Errorf("smooth arrivals gave a tick, or did not say none was seen: %+v %q", o.Findings, o.CannotTell)
	}
}

func TestByteRateLimit(t *testing.T) {
	m := medium(t, "eth1g")
	var runs []result.DiagnosisRun
	for i, size := range []int{256, 512, 1024, 1470} {
		pps := 20e6 / wireBits(t, m, size)
		runs = append(runs, load(i+1, size, 1.5*pps, pps))
	}
	o := Reason(Input{Medium: m, Runs: runs})
	f := one(t, o, result.FindingByteRate)
	within(t, "line_bits_per_second", f.Figures["line_bits_per_second"], 20e6, 0.001)
	within(t, "goodput_bits_per_second", f.Figures["goodput_bits_per_second"], 20e6*1470*8/wireBits(t, m, 1470), 0.001)
	if len(findings(o, result.FindingFrameRate)) != 0 {
		t.Errorf("a flat bit rate was also called a frame-rate limit")
	}
	pf := one(t, o, result.FindingPerFrame)
	within(t, "b_ns_per_byte", pf.Figures["b_ns_per_byte"], 8/20e6*1e9, 0.01)
	if !strings.Contains(o.Verdict, "byte-rate limited at 20.0 Mbit/s on the line") {
		t.Errorf("verdict %q", o.Verdict)
	}
}

func TestFrameAndByteLimitHandover(t *testing.T) {
	m := medium(t, "eth1g")
	var runs []result.DiagnosisRun
	for i, size := range []int{128, 256, 512, 1024, 1470} {
		pps := min(9000, 50e6/wireBits(t, m, size))
		runs = append(runs, load(i+1, size, 1.5*pps, pps))
	}
	o := Reason(Input{Medium: m, Runs: runs})
	fr, by := one(t, o, result.FindingFrameRate), one(t, o, result.FindingByteRate)
	within(t, "frames_per_second", fr.Figures["frames_per_second"], 9000, 0.001)
	within(t, "line_bits_per_second", by.Figures["line_bits_per_second"], 50e6, 0.001)
	// 50 Mbit/s over 9000 frames/s is 694 line bytes: 628 B of payload
	// with Ethernet's 38 and UDP/IPv4's 28.
	within(t, "handover_size", fr.Figures["handover_size"], 628, 0.01)
	if by.Figures["handover_size"] != fr.Figures["handover_size"] {
		t.Errorf("the two findings' hand-over sizes differ: %v", o.Findings)
	}
	if !strings.Contains(o.Verdict, "up to about 6") || !strings.Contains(o.Verdict, "(frame rate flat at 9,000-9,000/s from 128 to 512 B; line bit rate flat at 50.0-50.0 Mbit/s from 1024 to 1470 B)") {
		t.Errorf("verdict %q does not name the hand-over", o.Verdict)
	}
}

func TestOneSizeCannotTell(t *testing.T) {
	o := Reason(Input{Medium: medium(t, "eth1g"), Runs: []result.DiagnosisRun{load(3, 1470, 10500, 7000)}})
	if len(findings(o, result.FindingFrameRate))+len(findings(o, result.FindingByteRate)) != 0 {
		t.Errorf("one size decided frame against byte: %+v", o.Findings)
	}
	if !cannotTell(o, "one size cannot tell") || !strings.Contains(o.Verdict, "needs a second size") {
		t.Errorf("cannot tell %q, verdict %q", o.CannotTell, o.Verdict)
	}
}

func TestSizesTooCloseCannotTell(t *testing.T) {
	o := Reason(Input{Medium: medium(t, "eth1g"), Runs: []result.DiagnosisRun{load(1, 1460, 10500, 7000), load(2, 1470, 10500, 6990)}})
	if !cannotTell(o, "too close") {
		t.Errorf("cannot tell %q", o.CannotTell)
	}
}

func TestSizeCliffBuffer(t *testing.T) {
	// service=5000,buffer=2524: two datagrams per buffer up to 1262 B.
	runs := []result.DiagnosisRun{load(1, 1024, 15000, 10000), load(2, 1470, 15000, 5000)}
	if cs := Cliffs(runs); len(cs) != 1 || cs[0].Exact() || cs[0].Below != 1024 || cs[0].Above != 1470 {
		t.Fatalf("cliffs %+v", cs)
	}
	for i, size := range []int{1247, 1358, 1302, 1280, 1271, 1266, 1264, 1263, 1262} {
		rate := 10000.0
		if size > 1262 {
			rate = 5000
		}
		run := load(3+i, size, 15000, rate)
		run.Purpose = result.DiagnoseBisect
		c := Cliffs(runs)[0]
		if Side(c, run) != (size <= 1262) {
			t.Errorf("%d B put on the wrong side of %+v", size, c)
		}
		runs = append(runs, run)
	}
	o := Reason(Input{Medium: medium(t, "eth1g"), Runs: runs})
	f := one(t, o, result.FindingSizeCliff)
	if f.Figures["last_good_size"] != 1262 || f.Figures["first_bad_size"] != 1263 || f.Figures["buffer_bytes"] != 2524 || f.Confidence != result.ConfidenceHigh {
		t.Errorf("cliff %+v", f)
	}
	if !strings.Contains(o.Verdict, "a size cliff limits the rate") || cannotTell(o, "neither a flat") {
		t.Errorf("verdict %q, cannot tell %q", o.Verdict, o.CannotTell)
	}
}

func TestSizeLimit(t *testing.T) {
	size := func(id, size int, got int64) result.DiagnosisRun {
		return result.DiagnosisRun{ID: id, Purpose: result.DiagnoseSize, Size: size, Sent: 20, Received: got, AskedPPS: 200, SentPPS: 200}
	}
	// 4735 B got nothing in either of its two runs.
	runs := []result.DiagnosisRun{load(1, 1470, 20000, 20000), size(2, 8000, 0), size(3, 4735, 0), size(6, 4735, 0), size(4, 3000, 20), size(5, 3001, 0)}
	o := Reason(Input{Medium: medium(t, "eth1g"), Runs: runs})
	f := one(t, o, result.FindingSizeLimit)
	if f.Figures["max_size"] != 3000 || f.Confidence != result.ConfidenceHigh {
		t.Errorf("size limit %+v", f)
	}
	// A size that arrived in one run and not in another is no limit.
	runs[3].Size, runs[3].Received = 3001, 20
	if o := Reason(Input{Medium: medium(t, "eth1g"), Runs: runs}); one(t, o, result.FindingSizeLimit).Figures["max_size"] != 3001 {
		t.Errorf("a size that arrived once was taken for the limit: %+v", o.Findings)
	}
	// Not bisected: the limit lies between, and says so.
	o = Reason(Input{Medium: medium(t, "eth1g"), Runs: runs[:2]})
	if f := one(t, o, result.FindingSizeLimit); f.Figures["max_size"] != 1470 || f.Confidence != result.ConfidenceMedium {
		t.Errorf("unbisected size limit %+v", f)
	}
}

func TestLossFloorNoRateLimit(t *testing.T) {
	runs := []result.DiagnosisRun{load(1, 512, 20000, 19800), load(2, 1470, 20000, 19800),
		{ID: 3, Purpose: result.DiagnoseLowRate, Size: 1470, Sent: 10000, Received: 9897, AskedPPS: 5000, SentPPS: 5000, DeliveredPPS: 4948}}
	o := Reason(Input{Medium: medium(t, "eth1g"), Runs: runs})
	f := one(t, o, result.FindingLossFloor)
	within(t, "loss_percent", f.Figures["loss_percent"], 1.03, 0.001)
	if len(findings(o, result.FindingFrameRate))+len(findings(o, result.FindingByteRate)) != 0 || !cannotTell(o, "no run reached a rate limit") {
		t.Errorf("random loss was read as a rate limit: %+v %q", o.Findings, o.CannotTell)
	}
}

func TestOverloadLossIsNoFloor(t *testing.T) {
	runs := []result.DiagnosisRun{load(1, 512, 15000, 7000), load(2, 1470, 15000, 7000),
		{ID: 3, Purpose: result.DiagnoseLowRate, Size: 1470, Sent: 10000, Received: 10000, SentPPS: 1750}}
	o := Reason(Input{Medium: medium(t, "eth1g"), Runs: runs})
	if len(findings(o, result.FindingLossFloor)) != 0 || !cannotTell(o, "overload") {
		t.Errorf("overload loss: %+v %q", o.Findings, o.CannotTell)
	}
}

func TestQueue(t *testing.T) {
	run := load(1, 1470, 20000, 814)
	run.RTTMinMs, run.RTTLateMs, run.RTTSettled = 1.2, 101.5, true
	o := Reason(Input{Medium: medium(t, "eth1g"), Runs: []result.DiagnosisRun{run}})
	f := one(t, o, result.FindingQueue)
	within(t, "queue_ms", f.Figures["queue_ms"], 100.3, 0.001)
	if f.Confidence != result.ConfidenceHigh {
		t.Errorf("a queue that overflowed is known: %+v", f)
	}
	// A spoiled run beside one that kept up is no queue, nor a limit.
	spoiled := load(2, 512, 20000, 9000)
	spoiled.RTTMinMs, spoiled.RTTLateMs, spoiled.RTTSettled = 1, 190, true
	o = Reason(Input{Medium: medium(t, "eth1g"), Runs: []result.DiagnosisRun{spoiled, load(3, 512, 20000, 20000), load(4, 512, 20000, 19990)}})
	if len(findings(o, result.FindingQueue)) != 0 {
		t.Errorf("a spoiled run made a queue: %+v", o.Findings)
	}
	// A queue that never overflowed is a lower bound.
	run = load(1, 1470, 1100, 1000)
	run.LossPercent, run.RTTMinMs, run.RTTLateMs, run.RTTSettled = 0, 1, 41, true
	if f := one(t, Reason(Input{Medium: medium(t, "eth1g"), Runs: []result.DiagnosisRun{run}}), result.FindingQueue); f.Confidence != result.ConfidenceLow || !strings.Contains(f.Text, "at least 40 ms") {
		t.Errorf("a queue not full: %+v", f)
	}
}

// TestQueueStillFilling: load runs of 500 ms at 1.5 × a 10 Mbit/s limit
// end before a 200 ms queue fills (their round trips still rise: 104 ms
// late in the run, as `--trial 250ms` gave against rate=10mbit,queue=200ms),
// while the first, far above the limit, filled it. Only the full runs
// give the queue.
func TestQueueStillFilling(t *testing.T) {
	m := medium(t, "eth1g")
	full := load(1, 1470, 20000, 814)
	full.RTTMinMs, full.RTTLateMs, full.RTTSettled = 1.3, 200.0, true
	var runs []result.DiagnosisRun
	for i, size := range []int{256, 512, 1024} {
		r := load(i+2, size, 1.5*10e6/wireBits(t, m, size), 10e6/wireBits(t, m, size))
		r.LossPercent, r.RTTMinMs, r.RTTLateMs = 0, 0.5, 104.5
		runs = append(runs, r)
	}
	rising := load(5, 1470, 20000, 814)
	rising.RTTMinMs, rising.RTTLateMs = 1, 120 // lost, but still rising
	o := Reason(Input{Medium: m, Runs: append(runs, rising)})
	if f := one(t, o, result.FindingQueue); f.Confidence != result.ConfidenceLow || f.Figures["queue_ms"] != 119 {
		t.Errorf("no run was full, so the longest is a lower bound: %+v", f)
	}
	o = Reason(Input{Medium: m, Runs: append(runs, full)})
	f := one(t, o, result.FindingQueue)
	if f.Confidence != result.ConfidenceHigh || f.Figures["queue_ms"] != 198.7 || len(f.EvidenceRuns) != 1 || f.EvidenceRuns[0] != 1 {
		t.Errorf("the full run is the queue: %+v", f)
	}
	q := result.DiagnosisRun{ID: 6, Purpose: result.DiagnoseQueue, Size: 1470, AskedPPS: 1628, SentPPS: 1628, Sent: 1628, Received: 1000,
		DeliveredPPS: 814, LossPercent: 38.6, RTTMinMs: 1, RTTLateMs: 201, RTTSettled: true}
	o = Reason(Input{Medium: m, Runs: append(append(runs, full), q)})
	if f := one(t, o, result.FindingQueue); f.Figures["queue_ms"] != 200 || !slices.Equal(f.EvidenceRuns, []int{1, 6}) || f.Confidence != result.ConfidenceHigh {
		t.Errorf("the queue run and the full load run are the evidence: %+v", f)
	}
	// A queue run still filling adds nothing to a full one.
	q.RTTSettled = false
	if f := one(t, Reason(Input{Medium: m, Runs: append(append(runs, full), q)}), result.FindingQueue); f.Figures["queue_ms"] != 198.7 || !slices.Equal(f.EvidenceRuns, []int{1}) {
		t.Errorf("a queue run still filling: %+v", f)
	}
}

func TestMediumLimit(t *testing.T) {
	m := medium(t, "eth100")
	line := 100e6 / wireBits(t, m, 1470)
	runs := []result.DiagnosisRun{load(1, 1470, 1.1*line, 0.995*line)}
	o := Reason(Input{Medium: m, Runs: runs})
	f := one(t, o, result.FindingMedium)
	within(t, "percent_of_line", f.Figures["percent_of_line"], 99.5, 0.001)
	if !strings.HasPrefix(o.Verdict, "Verdict: the medium is the limit") || len(findings(o, result.FindingFrameRate)) != 0 {
		t.Errorf("verdict %q, findings %+v", o.Verdict, o.Findings)
	}
}

func TestHostLimit(t *testing.T) {
	run := load(1, 64, 12000, 11990)
	run.AskedPPS = 20000
	o := Reason(Input{Medium: medium(t, "eth1g"), Runs: []result.DiagnosisRun{run}})
	f := one(t, o, result.FindingHost)
	if f.Words["side"] != result.DiagnoseSideSender || !strings.HasPrefix(o.Verdict, "Verdict: this host is the limit") {
		t.Errorf("host finding %+v, verdict %q", f, o.Verdict)
	}
	// Our receiver's drops are ours too.
	run = load(1, 1470, 10500, 7000)
	run.HostDrops = 12
	if f := one(t, Reason(Input{Medium: medium(t, "eth1g"), Runs: []result.DiagnosisRun{run}}), result.FindingHost); f.Words["side"] != result.DiagnoseSideRecv {
		t.Errorf("receiver drops: %+v", f)
	}
}

func TestDirectionAndTCP(t *testing.T) {
	runs := []result.DiagnosisRun{
		{ID: 1, Purpose: result.DiagnoseUpload, BitsPerSecond: 90e6},
		{ID: 2, Purpose: result.DiagnoseDownload, BitsPerSecond: 45e6},
		{ID: 3, Purpose: result.DiagnoseTCP, BitsPerSecond: 10.4e6, RTTMs: 50, WindowBytes: 65535},
	}
	o := Reason(Input{Medium: medium(t, "eth1g"), Runs: runs})
	d := one(t, o, result.FindingDirection)
	if d.Figures["upload_bits_per_second"] != 90e6 || d.Figures["download_bits_per_second"] != 45e6 || !strings.Contains(d.Text, "download is the slower") {
		t.Errorf("direction %+v", d)
	}
	tc := one(t, o, result.FindingTCPBelowUDP)
	if tc.Words["explained_by"] != "window" || tc.Figures["udp_bits_per_second"] != 90e6 {
		t.Errorf("tcp %+v", tc)
	}
	// Without a window that explains it, a loss floor does.
	runs[2].WindowBytes = 4 << 20
	runs = append(runs, result.DiagnosisRun{ID: 4, Purpose: result.DiagnoseLowRate, Size: 1470, Sent: 10000, Received: 9800, SentPPS: 1000})
	if tc := one(t, Reason(Input{Medium: medium(t, "eth1g"), Runs: runs}), result.FindingTCPBelowUDP); tc.Words["explained_by"] != "loss" {
		t.Errorf("tcp with a loss floor %+v", tc)
	}
	// A direction that carried what was asked is a lower bound.
	fast := []result.DiagnosisRun{{ID: 8, Purpose: result.DiagnoseUpload, Size: 1470, AskedPPS: 20000, BitsPerSecond: 19.15e6},
		{ID: 9, Purpose: result.DiagnoseDownload, Size: 1470, AskedPPS: 20000, BitsPerSecond: 227.1e6}}
	if d := one(t, Reason(Input{Medium: medium(t, "eth1g"), Runs: fast}), result.FindingDirection); d.Text != "Direction: upload 19.1 Mbit/s, download at least 227.1 Mbit/s (all that was asked): upload is the slower, at 8 % of the other." {
		t.Errorf("direction %q", d.Text)
	}
	// One direction alone cannot be compared.
	if o := Reason(Input{Medium: medium(t, "eth1g"), Runs: runs[:1]}); !cannotTell(o, "only one direction") {
		t.Errorf("cannot tell %q", o.CannotTell)
	}
}

func TestTCPBelowUDPLoadRunsAndRetransmits(t *testing.T) {
	// The UDP capacity is what a load run delivered: 7,000/s of 1470 B.
	runs := []result.DiagnosisRun{load(1, 1470, 10500, 7000), load(2, 512, 10500, 7000),
		{ID: 3, Purpose: result.DiagnoseTCP, BitsPerSecond: 20e6, RTTMs: 2, WindowBytes: 1 << 20, Retransmits: 310}}
	o := Reason(Input{Medium: medium(t, "eth1g"), Runs: runs})
	tc := one(t, o, result.FindingTCPBelowUDP)
	within(t, "udp_bits_per_second", tc.Figures["udp_bits_per_second"], 7000*1470*8, 0.001)
	if tc.Words["explained_by"] != "loss" || !strings.Contains(tc.Text, "310 sent again") || tc.EvidenceRuns[0] != 1 {
		t.Errorf("tcp %+v", tc)
	}
	// Nothing lost and a window that carries more: unexplained, said so.
	runs[2].Retransmits = 0
	if tc := one(t, Reason(Input{Medium: medium(t, "eth1g"), Runs: runs}), result.FindingTCPBelowUDP); tc.Words["explained_by"] != "unexplained" {
		t.Errorf("tcp %+v", tc)
	}
	// TCP at the UDP capacity is no finding.
	runs[2].BitsPerSecond = 80e6
	if fs := findings(Reason(Input{Medium: medium(t, "eth1g"), Runs: runs}), result.FindingTCPBelowUDP); len(fs) != 0 {
		t.Errorf("tcp at the UDP rate: %+v", fs)
	}
}

func TestBestIsCorroborated(t *testing.T) {
	// Runs this host spoiled scatter; the far end's rate repeats.
	var runs []result.DiagnosisRun
	for i, d := range []float64{5490, 7591, 4236, 7000, 7010} {
		runs = append(runs, load(i+1, 256, 15000, d))
	}
	if b, agreed, ok := Best(runs, 256); !ok || !agreed || b.DeliveredPPS != 7010 {
		t.Errorf("best %v (corroborated %v), want 7010 corroborated", b.DeliveredPPS, agreed)
	}
	if b, agreed, _ := Best(runs[:3], 256); agreed || b.DeliveredPPS != 7591 {
		t.Errorf("best of three that disagree %v (corroborated %v), want the highest, 7591, uncorroborated", b.DeliveredPPS, agreed)
	}
	if _, _, ok := Best(runs, 512); ok {
		t.Error("a best run at a size never run")
	}
}

func TestRunRanges(t *testing.T) {
	for _, c := range []struct {
		ids  []int
		want string
	}{{[]int{4}, "run 4"}, {[]int{47, 41, 42, 43, 44, 45, 46}, "runs 41-47"}, {[]int{1, 3, 4, 9}, "runs 1, 3-4, 9"}} {
		if got := RunRanges(c.ids); got != c.want {
			t.Errorf("RunRanges(%v) = %q, want %q", c.ids, got, c.want)
		}
	}
}
