package reason

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// point is one size's load run: what the far end delivered when pushed.
type point struct {
	run  result.DiagnosisRun
	pps  float64 // delivered datagrams/s
	bps  float64 // the same on the medium's framing, bit/s
	good float64 // the same in UDP payload, bit/s
}

// Limited says a load run pushed the far end past what it delivers: it
// delivered well under what we sent.
func Limited(run result.DiagnosisRun) bool {
	if run.Purpose != result.DiagnoseLoad && run.Purpose != result.DiagnoseBisect {
		return false
	}
	if run.Received == 0 || run.DeliveredPPS <= 0 || run.SentPPS <= 0 {
		return false
	}
	return run.DeliveredPPS < LimitedShare*run.SentPPS
}

// HostLimited says our sender did not offer the rate asked for.
func HostLimited(run result.DiagnosisRun) bool {
	return run.AskedPPS > 0 && run.SentPPS < HostShare*run.AskedPPS
}

// Agree is how close two runs' delivered rates must be to corroborate
// each other.
const Agree = 0.02

// Best is the run at size, of the load or bisection runs, that stands for
// what the far end delivered: the highest whose rate another run at the
// size corroborates (within Agree), else the highest. A run this host
// spoiled (our sender, our receiver or a far end on this machine
// descheduled) shows a rate off the far end's, mostly lower, and two
// spoiled runs seldom agree; corroborated says whether one was.
func Best(runs []result.DiagnosisRun, size int) (best result.DiagnosisRun, corroborated, ok bool) {
	var at []result.DiagnosisRun
	for _, run := range runs {
		if run.Size == size && (run.Purpose == result.DiagnoseLoad || run.Purpose == result.DiagnoseBisect) {
			at = append(at, run)
		}
	}
	if len(at) == 0 {
		return best, false, false
	}
	slices.SortStableFunc(at, func(a, b result.DiagnosisRun) int { return cmpFloat(b.DeliveredPPS, a.DeliveredPPS) })
	for i, a := range at {
		for j, b := range at {
			if i != j && math.Abs(a.DeliveredPPS-b.DeliveredPPS) <= Agree*a.DeliveredPPS {
				return a, true, true
			}
		}
	}
	return at[0], false, true
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// points are, per size of the load runs (not bisections), the best run
// when it hit a limit, by size.
func (r *reasoner) points() []point {
	sizes := map[int]bool{}
	for _, run := range r.in.Runs {
		if run.Purpose == result.DiagnoseLoad {
			sizes[run.Size] = true
		}
	}
	var ps []point
	for size := range sizes {
		run, _, _ := Best(r.in.Runs, size)
		if !Limited(run) {
			continue
		}
		ps = append(ps, point{run: run, pps: run.DeliveredPPS, bps: r.lineBPS(run.Size, run.DeliveredPPS),
			good: run.DeliveredPPS * float64(run.Size) * 8})
	}
	slices.SortFunc(ps, func(a, b point) int { return a.run.Size - b.run.Size })
	return ps
}

// rateLimit reaches the rate findings: the medium, a frame-rate or
// byte-rate limit (or both), the per-frame cost, a tick, or this host.
func (r *reasoner) rateLimit() {
	if r.medium() {
		return
	}
	ps := r.points()
	r.hostLimit(len(ps) > 0)
	switch {
	case len(ps) == 0:
		if r.limit.kind == "" {
			r.cannot("no run reached a rate limit: the far end delivered what we sent at every size tried, up to the rates asked")
		}
		return
	case len(ps) == 1:
		p := ps[0]
		r.cannot("frame rate or byte rate: only %d B reached a limit (%s datagrams/s, %s on the line), and one size cannot tell a flat frame rate from a flat bit rate",
			p.run.Size, num(p.pps), mbit(p.bps))
		r.setLimit("rate", fmt.Sprintf("the far end delivers at most %s datagrams/s of %d B (%s on the line); whether frames or bytes bound it needs a second size.", num(p.pps), p.run.Size, mbit(p.bps)), ids(ps))
		return
	}
	frames, bytes := r.split(ps)
	switch {
	case len(frames) == len(ps) && len(bytes) == len(ps):
		r.cannot("frame rate or byte rate: the sizes that reached a limit (%d to %d B) lie too close together for either to stand out", ps[0].run.Size, ps[len(ps)-1].run.Size)
	case len(frames) == len(ps):
		r.frameLimit(ps, 0)
	case len(bytes) == len(ps):
		r.byteLimit(ps, 0)
	case covers(ps, frames, bytes) && len(frames) > 0 && len(bytes) > 0:
		r.bothLimits(ps, frames, bytes)
	default:
		if !r.cliffExplains() {
			r.cannot("the delivered rate follows neither a flat frame rate nor a flat bit rate across %d to %d B", ps[0].run.Size, ps[len(ps)-1].run.Size)
		}
		return
	}
	r.perFrame(ps)
	r.tick(ps)
}

// split returns the points on the frame-rate plateau and those on the
// bit-rate plateau (a point may be on both).
func (r *reasoner) split(ps []point) (frames, bytes []point) {
	var maxPPS, maxBPS float64
	for _, p := range ps {
		maxPPS, maxBPS = max(maxPPS, p.pps), max(maxBPS, p.bps)
	}
	for _, p := range ps {
		if p.pps >= (1-FlatTolerance)*maxPPS {
			frames = append(frames, p)
		}
		if p.bps >= (1-FlatTolerance)*maxBPS {
			bytes = append(bytes, p)
		}
	}
	return frames, bytes
}

// cliffExplains says a neighbouring pair of points is a cliff (reached
// by cliffs, which runs after): the rates then follow no plateau.
func (r *reasoner) cliffExplains() bool {
	return len(Cliffs(r.in.Runs)) > 0
}

// covers says every point lies on one plateau or the other.
func covers(ps, frames, bytes []point) bool {
	on := map[int]bool{}
	for _, p := range append(slices.Clone(frames), bytes...) {
		on[p.run.Size] = true
	}
	return len(on) == len(ps)
}

func ids(ps []point) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.run.ID
	}
	return out
}

func (r *reasoner) setLimit(kind, text string, runs []int) {
	r.limit.kind, r.limit.text, r.limit.runs, r.limit.detail = kind, text, runs, ""
}

// spread returns a confidence from the points: several sizes spanning a
// factor of two are high, fewer medium.
func spread(ps []point) string {
	if len(ps) >= 3 && ps[len(ps)-1].run.Size >= 2*ps[0].run.Size {
		return result.ConfidenceHigh
	}
	return result.ConfidenceMedium
}

// frameLimit records a flat frame rate over ps.
func (r *reasoner) frameLimit(ps []point, handover int) {
	var sum, lo, hi float64 = 0, math.Inf(1), 0
	for _, p := range ps {
		sum += p.pps
		lo, hi = min(lo, p.pps), max(hi, p.pps)
	}
	fps := sum / float64(len(ps))
	figs := map[string]float64{"frames_per_second": fps}
	if handover > 0 {
		figs["handover_size"] = float64(handover)
	}
	big := ps[len(ps)-1]
	flat := fmt.Sprintf("frame rate flat at %s-%s/s from %d to %d B", num(lo), num(hi), ps[0].run.Size, big.run.Size)
	text := fmt.Sprintf("The device is frame-rate limited at %s frames/s: the %s.", num(fps), strings.Replace(flat, " flat", " is flat", 1))
	r.add(result.FindingFrameRate, spread(ps), figs, ids(ps), text)
	cap := fps * float64(big.run.Size) * 8
	head := fmt.Sprintf("the device is frame-rate limited at %s frames/s. At %d bytes that caps UDP at %s", num(fps), big.run.Size, mbit(cap))
	if b, ok := r.breakdown(big.run.Size); ok && b.GoodputBPS > 0 {
		head += fmt.Sprintf(", %.0f %% of what %s allows", 100*cap/b.GoodputBPS, r.in.Medium.Name)
	}
	head += "; larger frames, or more frames per tick or interrupt in the firmware, would raise it."
	if handover == 0 {
		r.setLimit(result.FindingFrameRate, head, ids(ps))
	}
	r.limit.detail = flat
}

// byteLimit records a flat bit rate over ps.
func (r *reasoner) byteLimit(ps []point, handover int) {
	var sum, lo, hi float64 = 0, math.Inf(1), 0
	for _, p := range ps {
		sum += p.bps
		lo, hi = min(lo, p.bps), max(hi, p.bps)
	}
	line := sum / float64(len(ps))
	big := ps[len(ps)-1]
	figs := map[string]float64{"line_bits_per_second": line, "goodput_bits_per_second": big.good}
	if handover > 0 {
		figs["handover_size"] = float64(handover)
	}
	flat := fmt.Sprintf("line bit rate flat at %s from %d to %d B", mbitRange(lo, hi), ps[0].run.Size, big.run.Size)
	text := fmt.Sprintf("The device is byte-rate limited at %s on %s's framing: the %s (%s of UDP payload at %d B).",
		mbit(line), r.in.Medium.Name, strings.Replace(flat, " flat", " is flat", 1), mbit(big.good), big.run.Size)
	r.add(result.FindingByteRate, spread(ps), figs, ids(ps), text)
	if handover == 0 {
		head := fmt.Sprintf("the device is byte-rate limited at %s on the line (%s of UDP payload at %d B)", mbit(line), mbit(big.good), big.run.Size)
		if r.in.Medium.BitRate > 0 {
			head += fmt.Sprintf(", %.0f %% of %s", 100*line/r.in.Medium.BitRate, r.in.Medium.Name)
		}
		r.setLimit(result.FindingByteRate, head+"; the frame rate falls as frames grow, so bytes, not frames, bound it.", ids(ps))
	}
	if r.limit.detail != "" && handover > 0 {
		r.limit.detail += "; " + flat
	} else {
		r.limit.detail = flat
	}
}

// bothLimits records a frame-rate limit at small sizes handing over to a
// byte-rate limit at large ones.
func (r *reasoner) bothLimits(ps, frames, bytes []point) {
	var fps, bps float64
	for _, p := range frames {
		fps += p.pps / float64(len(frames))
	}
	for _, p := range bytes {
		bps += p.bps / float64(len(bytes))
	}
	// The hand-over is the size whose line bits at fps make bps.
	lo, hi := ps[0].run.Size, ps[len(ps)-1].run.Size
	for lo < hi {
		mid := (lo + hi) / 2
		if r.lineBPS(mid, fps) < bps {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	r.frameLimit(frames, lo)
	r.byteLimit(bytes, lo)
	detail := r.limit.detail
	defer func() { r.limit.detail = detail }()
	r.setLimit(result.FindingFrameRate, fmt.Sprintf("the device is limited by its frame rate, %s frames/s, up to about %d B, and by its byte rate, %s on the line, above it.",
		num(fps), lo, mbit(bps)), ids(ps))
}

// perFrame fits time per frame = a + b·size over the points.
func (r *reasoner) perFrame(ps []point) {
	n := float64(len(ps))
	var mx, my float64
	for _, p := range ps {
		mx, my = mx+float64(p.run.Size)/n, my+1/p.pps/n
	}
	var sxy, sxx, syy float64
	for _, p := range ps {
		dx, dy := float64(p.run.Size)-mx, 1/p.pps-my
		sxy, sxx, syy = sxy+dx*dy, sxx+dx*dx, syy+dy*dy
	}
	if sxx == 0 {
		return
	}
	b := sxy / sxx
	a := my - b*mx
	conf := result.ConfidenceLow
	if syy > 0 && len(ps) >= 3 && sxy*sxy/(sxx*syy) >= 0.99 || syy == 0 && len(ps) >= 3 {
		conf = result.ConfidenceHigh
	} else if len(ps) >= 3 {
		conf = result.ConfidenceMedium
	}
	r.add(result.FindingPerFrame, conf, map[string]float64{"a_us": a * 1e6, "b_ns_per_byte": b * 1e9}, ids(ps),
		fmt.Sprintf("Each frame costs %.2f µs plus %.3f ns per byte (time per frame fitted over %d sizes).", a*1e6, b*1e9, len(ps)))
}

// tick records a timer tick seen in the arrivals of frame-limited runs.
func (r *reasoner) tick(ps []point) {
	var seen []point
	for _, p := range ps {
		if p.run.TickHz > 0 && p.run.FramesPerTick > 0 {
			seen = append(seen, p)
		}
	}
	if len(seen) == 0 {
		if r.find(result.FindingFrameRate) != nil {
			r.cannot("a timer tick: no run's arrivals came in bursts at a fixed period (smooth arrivals, or, against a server, arrivals we could not time)")
		}
		return
	}
	per := make([]float64, len(seen))
	for i, p := range seen {
		per[i] = p.run.FramesPerTick
	}
	slices.Sort(per)
	k, hz := math.Round(per[len(per)/2]), seen[0].run.TickHz
	conf := result.ConfidenceMedium
	if len(seen) >= 2 {
		conf = result.ConfidenceHigh
	}
	r.add(result.FindingTick, conf, map[string]float64{"period_ms": 1000 / hz, "frames_per_tick": k}, ids(seen),
		fmt.Sprintf("Frames leave in bursts of %.0f every %.3g ms: a timer tick of %.0f Hz moves %.0f frames per tick.", k, 1000/hz, hz, k))
	if r.limit.kind == result.FindingFrameRate {
		r.limit.text = strings.Replace(r.limit.text, " frames/s", fmt.Sprintf(" frames/s (%.0f per %.3g ms tick)", k, 1000/hz), 1)
		r.limit.detail += fmt.Sprintf("; arrivals in bursts of %.0f every %.3f ms", k, 1000/hz)
	}
}

// medium records a delivered rate at the medium's: nothing else limits.
func (r *reasoner) medium() bool {
	var best *result.DiagnosisRun
	bestShare := 0.0
	for i, run := range r.in.Runs {
		if run.Purpose != result.DiagnoseLoad || run.DeliveredPPS <= 0 {
			continue
		}
		b, ok := r.breakdown(run.Size)
		if !ok || b.PacketsPerSecond <= 0 {
			continue
		}
		if share := run.DeliveredPPS / b.PacketsPerSecond; share > bestShare {
			best, bestShare = &r.in.Runs[i], share
		}
	}
	if best == nil || bestShare < MediumShare {
		return false
	}
	pct := 100 * bestShare
	text := fmt.Sprintf("the medium is the limit: %s datagrams/s of %d B is %.1f %% of what %s carries (%s on the line).",
		num(best.DeliveredPPS), best.Size, pct, r.in.Medium.Name, mbit(r.lineBPS(best.Size, best.DeliveredPPS)))
	r.add(result.FindingMedium, result.ConfidenceHigh, map[string]float64{"percent_of_line": pct}, []int{best.ID}, "The "+text[4:])
	r.setLimit(result.FindingMedium, text, []int{best.ID})
	return true
}

// hostLimit records our own sender or receiver as the limit: no size hit
// the far end's limit and our sender fell short of the rate asked, or our
// receive buffer dropped what came back.
func (r *reasoner) hostLimit(reached bool) {
	var sent, recv []int
	var best float64
	for _, run := range r.in.Runs {
		if run.Purpose != result.DiagnoseLoad {
			continue
		}
		if HostLimited(run) && !Limited(run) {
			sent = append(sent, run.ID)
			best = max(best, run.SentPPS)
		}
		if run.HostDrops > 0 {
			recv = append(recv, run.ID)
		}
	}
	if len(recv) > 0 {
		f := r.add(result.FindingHost, result.ConfidenceMedium, map[string]float64{}, recv,
			"This host's receiver dropped datagrams that came back (its socket buffer overflowed): part of the loss seen is ours, not the device's.")
		f.Words = map[string]string{"side": result.DiagnoseSideRecv}
	}
	if reached || len(sent) == 0 {
		return
	}
	text := fmt.Sprintf("this host is the limit: our sender could not offer more than %s datagrams/s, and the far end delivered all it got, so the device's own limit lies above what this host can send.", num(best))
	f := r.add(result.FindingHost, result.ConfidenceHigh, map[string]float64{}, sent, "T"+text[1:])
	f.Words = map[string]string{"side": result.DiagnoseSideSender}
	r.setLimit(result.FindingHost, text, sent)
}
