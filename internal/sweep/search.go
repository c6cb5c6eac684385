package sweep

import (
	"context"
	"fmt"
	"math"

	"github.com/wirebench/wirebench/internal/result"
)

// search is what one search of one size found.
type search struct {
	// rate is what the far end delivered in the trial that confirmed the
	// highest passing rate, tried (0: none passed); held is that trial's
	// length in seconds.
	rate, tried, held float64
	confirm           *result.SweepTrial
	confirmed         bool
	atMax             bool
	// limited: the search ended below the highest rate because this host
	// could not offer a rate, not because the far end failed.
	limited bool
	trials  int
}

// Verdict judges one trial against the criteria (see the package doc).
func (c *Config) Verdict(s Spec, o result.SweepOutcome) string {
	if o.SendErrors > 0 || o.Sent == 0 || o.OfferedPPS < 0.99*s.RatePPS {
		return VerdictHost
	}
	if s.Packets == 0 && float64(o.Sent) < 0.9*s.RatePPS*s.Duration.Seconds() {
		// Our sender stalled until the trial's time ran out: what it did
		// send left at the rate, but the trial was not the load asked for.
		// (A few per cent short is the sender's start-up: the trial's
		// clock starts before its first datagram.)
		return VerdictHost
	}
	v := VerdictPass
	if LossPercent(o) > c.LossPercent || (c.LossPercent == 0 && o.Lost > 0) {
		v = VerdictLoss
	} else if o.BacklogKnown && o.BacklogS > c.backlogLimit(o) {
		v = VerdictPace
	}
	if v != VerdictPass && c.Spoiled != nil && c.Spoiled(s, o) != "" {
		return VerdictStall
	}
	if o.HostDrops > 0 && o.Lost > 0 {
		return VerdictHost
	}
	if limit := c.backlogLimit(o); v != VerdictPass && o.MaxLagS > limit && stallExplains(v, o, limit) {
		return VerdictStall
	}
	return v
}

// stallExplains says whether our sender's stalls (it fell behind, deeper
// than limit, and caught up in a burst) can account for a failure: each
// burst holds its lag × rate datagrams, so together they can add at most
// that much loss, and at most MaxLagS of backlog. A failure beyond that is
// the far end's.
func stallExplains(v string, o result.SweepOutcome, limit float64) bool {
	if v == VerdictLoss {
		_, bursts := StallBursts(o, limit)
		return float64(o.Lost) <= bursts
	}
	if o.ServicePPS > 0 {
		// The backlog came from the far end's own rate, which a burst
		// of ours does not change.
		return false
	}
	return o.BacklogS <= o.MaxLagS
}

// StallBursts is how many of a trial's stalls were deeper than depth
// (seconds), n, and how many datagrams our sender sent in their catch-up
// bursts: each lag times the rate offered, summed. Each such burst can
// overflow a queue with depth of room that a steady sender would not, by
// at most its own size. Without the list of stalls it is the deepest
// one's (MaxLagS) alone.
func StallBursts(o result.SweepOutcome, depth float64) (n int, datagrams float64) {
	if o.StallLagsS == nil {
		if o.MaxLagS > depth {
			return 1, o.MaxLagS * o.OfferedPPS
		}
		return 0, 0
	}
	var sum float64
	for _, l := range o.StallLagsS {
		if l > depth {
			n++
			sum += l
		}
	}
	return n, sum * o.OfferedPPS
}

// backlogLimit is the most backlog a trial may build and still pass: the
// queue may grow by PaceTolerance of the send window, so that the rate we
// offered exceeds the rate the far end delivered by at most that share (or
// by the receive window's timing resolution, BacklogFloor, in a short
// trial).
func (c *Config) backlogLimit(o result.SweepOutcome) float64 {
	return max(c.PaceTolerance*o.SendSeconds, c.BacklogFloor.Seconds())
}

// LossPercent is the share of what we sent that the far end did not get:
// its lost count and what its counts do not cover, over both.
func LossPercent(o result.SweepOutcome) float64 {
	den := o.Total + o.Unreported
	if den <= 0 {
		if o.Sent > 0 {
			return 100
		}
		return 0
	}
	return 100 * float64(o.Lost+o.Unreported) / float64(den)
}

// delivered is the rate the far end delivered in a trial: the receiver's
// count over its own receive window, which is our send window plus the
// backlog the trial built (the server's report gives that window; for a
// reflector it is our send window plus the rise of the round-trip time).
// In our sender's units: what arrived of what we offered, over the send
// window and the backlog (a queue that filled during the trial and drained
// after it does not count as delivered in it). A backlog that shrank does
// not raise it above what we offered. Without a known backlog (a device's
// own counts) it is what we offered less the loss. When this host was the
// limit it is what we offered: the far end was not the bound.
func delivered(v string, o result.SweepOutcome) float64 {
	if v == VerdictHost {
		return o.OfferedPPS
	}
	rate := o.OfferedPPS * (1 - LossPercent(o)/100)
	if o.ServicePPS > 0 {
		// A reflector that held a queue delivered at its own rate.
		return min(rate, o.ServicePPS)
	}
	if o.BacklogKnown && o.BacklogS > 0 && o.SendSeconds > 0 {
		rate *= o.SendSeconds / (o.SendSeconds + o.BacklogS)
	}
	return rate
}

// search finds the highest passing rate of one size: start at the highest
// rate, jump just below what the far end delivered when a trial fails,
// gallop up from a pass, bisect what is left, and confirm. Long because it
// is one state machine: every trial's verdict moves the same dozen bounds
// and flags (lo, hi, the host's and the far end's lowest failures, the
// step, confirming, the stall and re-run guards, the estimate) at once,
// and split up they would be passed around as one value anyway; the steps
// around the loop (logging a trial, settling the result) are helpers.
func (s *sweeper) search(ctx context.Context, size, rep int, sr *result.SweepSize, bisected bool) (search, error) {
	cfg := &s.cfg
	top := cfg.MaxPPS(size)
	res := cfg.Resolution
	var (
		f          search
		lo         float64       // highest pass
		hi         = math.Inf(1) // lowest fail
		step       = 4 * res     // gallop step after a pass
		rate       = top         // next rate to try
		confirming bool
		stalls     int     // trials in a row our sender stalled in
		marginal   float64 // the rate whose trial failed on backlog and was run once more
		saturated  float64 // the far end's rate, timed in a trial that lost (it held a full queue)
		est        float64 // the latest failing trial's estimate of the limit
		below      float64 // how far under est to jump
		last       *result.SweepTrial
	)
	// The lowest rates this host could not offer and the far end failed.
	fl := fails{host: math.Inf(1), device: math.Inf(1), res: res}
	// The progress of a trial is told once its verdict has moved the
	// bounds: what the search still needs follows from them.
	defer s.tell(searchState{size: size, ran: cfg.MaxTrials})
	for f.trials < cfg.MaxTrials {
		s.tell(searchState{size: size, lo: lo, hi: hi, confirming: confirming, ran: f.trials})
		if ctx.Err() != nil {
			return f, nil
		}
		spec := s.spec(size, rate, confirming)
		o, err := s.trial(ctx, spec)
		if ctx.Err() != nil {
			return f, nil // a cut-short trial is no evidence either way
		}
		if err != nil {
			return f, err
		}
		f.trials++
		v := cfg.Verdict(spec, o)
		last = s.logTrial(sr, spec, o, v, size, rep, f.trials, confirming, bisected)
		untested := false // the rate stalled every time: no evidence of the far end's limit
		s.stalled = v == VerdictStall
		if v == VerdictStall {
			if stalls++; stalls <= cfg.StallRetries {
				continue // once more at the same rate
			}
			// Stalling again: this host cannot pace it. The next rate
			// gets its own retries.
			v, stalls, untested = VerdictHost, 0, true
		} else {
			stalls = 0
		}
		if v == VerdictLoss && o.ServicePPS > 0 {
			saturated = max(saturated, o.ServicePPS)
		}
		if v == VerdictPace && marginal != rate && o.ServicePPS > 0 && (confirming || rate <= saturated) {
			// A reflector's trial failed on the timing of the far
			// end's own rate alone, which a starved host shifts by
			// more than the 0.5 % bound (a reflector on it sends late
			// for longer than the fit can see through): a
			// confirmation, or a trial at no more than the rate the
			// far end was timed at when it lost, runs once more at the
			// same rate before the search goes below it. A far end
			// that cannot hold the rate fails it again.
			marginal = rate
			continue
		}
		pass := v == VerdictPass
		switch {
		case pass && confirming:
			f.confirmAt(rate, top, last, fl)
			return f, nil
		case pass:
			lo = rate
			step *= 2
		default:
			hi = min(hi, rate)
			if v == VerdictHost {
				fl.host = min(fl.host, rate)
			} else {
				fl.device = min(fl.device, rate)
			}
			if confirming {
				// The rate did not hold: the new floor is the highest
				// pass below both it and what the far end delivered in
				// the confirming trial (short passes above that are
				// what a queue hid, not what the far end sustains).
				// Nor will any rate more than PaceTolerance above it
				// hold for as long: that bounds the search from above.
				d := delivered(v, o)
				lo, confirming = passBelow(sr.TrialLog, rep, min(rate, d)), false
				if d > lo {
					hi = min(hi, d*(1+cfg.PaceTolerance))
				}
			}
			step = 2 * res
		}
		if lo > 0 && (lo >= top || hi <= lo*(1+res)) {
			confirming, rate = true, lo
			continue
		}
		if !pass && untested {
			// What this host could not pace says nothing of where the
			// far end's limit lies (it offered the rate, in bursts),
			// unless a reflector was timed delivering while it held a
			// queue (its own rate: jump just under it, as after a
			// loss); otherwise bisect rather than creep down from it.
			est = 0
			if o.ServicePPS > 0 {
				est, below = delivered(VerdictLoss, o), res/4
			}
		} else if !pass {
			est, below = delivered(v, o), res
			if o.ServicePPS > 0 && v != VerdictHost {
				// The far end's own rate, timed from its deliveries,
				// is a close estimate: jump to just under it.
				below = res / 4
			}
		}
		rate = next(lo, hi, top, step, res, pass, est, below)
	}
	f.outOfTrials(lo, top, fl, sr.TrialLog, rep, last != nil)
	return f, nil
}

// confirmAt settles f on rate, whose trial t confirmed it.
func (f *search) confirmAt(rate, top float64, t *result.SweepTrial, fl fails) {
	f.tried, f.confirm, f.confirmed = rate, t, true
	f.rate, f.held = t.DeliveredPPS, held(t)
	f.atMax = rate >= top
	f.limited = fl.limited(*f)
}

// outOfTrials settles f when the trials ran out: on the best rate seen, lo,
// unconfirmed, with what the far end delivered in the trial (of log, this
// repeat's, when ran says there was one) it passed and how long it lasted.
func (f *search) outOfTrials(lo, top float64, fl fails, log []result.SweepTrial, rep int, ran bool) {
	f.tried = lo
	f.atMax = lo >= top
	f.limited = fl.limited(*f)
	if ran && lo > 0 {
		for i := len(log) - 1; i >= 0; i-- {
			if t := &log[i]; t.Repeat == rep && t.RatePPS == lo && t.Verdict == VerdictPass {
				f.confirm = t
				f.rate, f.held = t.DeliveredPPS, held(t)
				break
			}
		}
	}
}

// logTrial keeps one trial (the trial-th of this search, at spec's rate)
// in the size's log, tells Config.OnTrial, and returns the kept record.
func (s *sweeper) logTrial(sr *result.SweepSize, spec Spec, o result.SweepOutcome, v string, size, rep, trial int, confirming, bisected bool) *result.SweepTrial {
	rec := result.SweepTrial{Repeat: rep, RatePPS: spec.RatePPS, Confirm: confirming, TrialS: spec.Duration.Seconds(), TrialPackets: spec.Packets,
		Verdict: v, DeliveredPPS: delivered(VerdictPass, o), SweepOutcome: o}
	rec.RTTs = nil // summarised in result.SweepRTT; the log keeps no per-datagram times
	sr.TrialLog = append(sr.TrialLog, rec)
	s.sawOverload(size, v, o)
	if s.reused {
		// The survey's trial, told when it ran.
		s.reused = false
	} else if s.cfg.OnTrial != nil {
		s.told = &Progress{Size: size, Repeat: rep, Trial: trial, RatePPS: spec.RatePPS, Outcome: o, Verdict: v,
			Done: s.fin, Planned: s.planned, Elapsed: s.cfg.now().Sub(s.start), Bisected: bisected, Spec: spec, Rerun: s.rerun}
	}
	return &sr.TrialLog[len(sr.TrialLog)-1]
}

// spec is the trial to run at rate: the search's length, or the
// confirmation's (Config.Confirm) for the confirming trial.
func (s *sweeper) spec(size int, rate float64, confirming bool) Spec {
	sp := Spec{Size: size, RatePPS: rate, Duration: s.cfg.Trial, Packets: s.cfg.Packets}
	if c := s.cfg.Confirm; confirming && c > 0 {
		if sp.Packets > 0 {
			sp.Packets = max(sp.Packets, int64(math.Ceil(rate*c.Seconds())))
		} else {
			sp.Duration = max(sp.Duration, c)
		}
	}
	return sp
}

// held is the length of the trial t in seconds: as asked, or its send
// window when it was asked for a count of datagrams.
func held(t *result.SweepTrial) float64 {
	if t.TrialS > 0 {
		return t.TrialS
	}
	return t.SendSeconds
}

// fails are a search's lowest failing rates: the lowest this host could
// not offer (host) and the lowest the far end failed (device), with the
// search's resolution (res, Config.Resolution).
type fails struct{ host, device, res float64 }

// failsIn are the lowest failing rates among log's trials: this host's
// (VerdictHost) and the far end's (any other verdict but a pass or a
// stall run again).
func failsIn(log []result.SweepTrial, res float64) fails {
	fl := fails{host: math.Inf(1), device: math.Inf(1), res: res}
	for _, t := range log {
		switch t.Verdict {
		case VerdictPass, VerdictStall:
		case VerdictHost:
			fl.host = min(fl.host, t.RatePPS)
		default:
			fl.device = min(fl.device, t.RatePPS)
		}
	}
	return fl
}

// limited says whether a search's result is this host's limit rather than
// the far end's: it is below the highest rate, this host failed to offer a
// rate below the far end's lowest failure, and either that failure lies
// more than the resolution above the result (the far end's limit then lies
// somewhere between, at rates this host could not test; a far-end failure
// within the resolution bounds its limit as closely as a search that met
// no stall) or the result is unconfirmed and this host could not offer it
// or a rate under it (what kept it from being confirmed was this host:
// a host that stalls in every confirmation). Either way the result is a
// lower bound.
func (fl fails) limited(f search) bool {
	if f.atMax || !(fl.host < fl.device) {
		return false
	}
	return fl.device > f.tried*(1+fl.res) || !f.confirmed && f.tried > 0 && fl.host <= f.tried
}

// passBelow is the highest rate below r that passed in repetition rep.
func passBelow(log []result.SweepTrial, rep int, r float64) float64 {
	lo := 0.0
	for _, t := range log {
		if t.Repeat == rep && t.Verdict == VerdictPass && t.RatePPS < r {
			lo = max(lo, t.RatePPS)
		}
	}
	return lo
}

// next picks the rate after a trial: lo passed, hi failed (+Inf: none
// yet), top is the ceiling, d the rate the far end delivered in the
// latest failing trial (its estimate of the far end's limit), jumped to
// less the share below.
func next(lo, hi, top, step, res float64, pass bool, d, below float64) float64 {
	if pass {
		// Gallop up from the pass, never past the midpoint of what is
		// left; when the pass lies well below the last failure's
		// estimate (the estimate was poor), bisect at once.
		r := min(top, lo*(1+step))
		if !math.IsInf(hi, 1) {
			if lo < 0.9*d {
				return (lo + hi) / 2
			}
			r = min(r, (lo+hi)/2)
		}
		return r
	}
	// Jump just below what the far end kept up with, when that is new
	// ground; otherwise bisect.
	if r := d * (1 - below); r > lo*(1+res/2) && r < hi {
		return r
	}
	if lo > 0 {
		return (lo + hi) / 2
	}
	return hi / 2
}

// summarise fills a size's figures from its searches.
func summarise(sr *result.SweepSize, found []search) {
	rates := make([]float64, len(found))
	tried := make([]float64, len(found))
	confirmed, limited := true, 0
	sr.AtMax = true
	for i, f := range found {
		rates[i], tried[i] = f.rate, f.tried
		if f.held > 0 && (sr.HeldS == 0 || f.held < sr.HeldS) {
			sr.HeldS = f.held
		}
		sr.Trials += f.trials
		confirmed = confirmed && f.confirmed
		if f.limited {
			limited++
		}
		sr.AtMax = sr.AtMax && f.atMax
	}
	last := found[len(found)-1]
	if last.confirm != nil {
		sr.Sent = last.confirm.Sent
		loss := LossPercent(last.confirm.SweepOutcome)
		sr.LossPercent = &loss
		sr.RTT = last.confirm.RTT
		sr.CountedBy, sr.Device = last.confirm.CountedBy, last.confirm.Device
	}
	sr.Confirmed = confirmed
	sr.LimitedByHost = limited > 0
	sr.RatePPS = mean(rates)
	sr.TriedPPS = mean(tried)
	sr.RateBPS = sr.RatePPS * float64(sr.Size) * 8
	sr.Found = sr.RatePPS > 0
	if sr.LinePPS > 0 && sr.Found {
		p := 100 * sr.RatePPS / sr.LinePPS
		sr.PercentOfLine = &p
	}
	if len(found) > 1 {
		sr.Repeats = confidence(rates)
		if limited > 0 && limited < len(found) {
			sr.Repeats.Unstable = true
		}
		if sr.Repeats.Unstable {
			sr.Warnings = append(sr.Warnings, fmt.Sprintf("the %d repetitions spread too widely to trust the mean (95 %% interval ±%.1f %%)", len(found), sr.Repeats.CIPercent))
		}
	}
	if !confirmed {
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("no confirming trial passed within the trial budget: the rate shown is the best seen, unconfirmed: it held for a trial of %s only", secs(sr.HeldS)))
	}
	if sr.LimitedByHost {
		sr.Warnings = append(sr.Warnings, "limited by this host: it could not offer a higher rate, so the far end's limit was not reached; the rate is a lower bound")
	}
	if sr.RatePPS == 0 {
		sr.Warnings = append(sr.Warnings, "no rate passed")
	}
	for _, t := range sr.TrialLog {
		if t.HostDrops > 0 {
			sr.Warnings = append(sr.Warnings, fmt.Sprintf("our own socket dropped %d datagrams in a trial at %.0f/s (host-side, counted as lost)", t.HostDrops, t.RatePPS))
		}
	}
}
