package sweep

import (
	"context"
	"math"
	"time"

	"github.com/wirebench/wirebench/internal/eta"
	"github.com/wirebench/wirebench/internal/mlrsearch"
	"github.com/wirebench/wirebench/internal/result"
)

// Phases is how many phases of the multi-rate search come before its
// final one: with 1 s trials and a 10 s confirmation, trials of 1 s, then
// 3.2 s, then the 10 s final ones.
const Phases = 2

// SearchTargets runs one multi-rate, duration-aware search
// (internal/mlrsearch) of size under several loss criteria at once (in
// percent, strictest first: RFC 2544's NDR and PDR), with cfg's trials,
// gap, stall rules and progress (cfg.Sizes, Repeat and Packets are not
// used: the search's trials are timed). Every trial judges every
// criterion: it appears in each criterion's trial log with its verdict
// under it (in the logs after the first marked reused: the same trial).
// The search starts with a trial of cfg.Trial at the highest rate; its
// trials grow geometrically towards cfg.Confirm as its intervals narrow to
// cfg.Resolution, and each criterion's rate is confirmed by a trial of
// cfg.Confirm (confirm: true in the log). It returns one result per
// criterion, or nil when ctx ended first.
func SearchTargets(ctx context.Context, cfg Config, r Runner, size int, losses []float64) ([]*result.SweepSize, error) {
	cfg.Sizes = []int{size}
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &sweeper{cfg: cfg, r: r, res: NewResult(result.SweepTest{}), start: cfg.now(), done: map[int]*result.SweepSize{}, planned: 1, lone: true}
	s.est = eta.New(s.start)
	srs := make([]*result.SweepSize, len(losses))
	for i := range losses {
		srs[i] = &result.SweepSize{Size: size, TrialLog: []result.SweepTrial{}}
		if cfg.LinePPS != nil {
			srs[i].LinePPS = cfg.LinePPS(size)
		}
	}
	found, err := s.multi(ctx, size, 1, losses, srs, false)
	if ctx.Err() != nil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for i, sr := range srs {
		summarise(sr, []search{found[i]})
		judge(sr, "")
	}
	return srs, nil
}

// multi runs repetition rep of the multi-rate search of size under
// losses, its trials logged into srs (one per criterion), and settles
// each criterion's result as search does.
func (s *sweeper) multi(ctx context.Context, size, rep int, losses []float64, srs []*result.SweepSize, bisected bool) ([]search, error) {
	cfg := &s.cfg
	top := cfg.MaxPPS(size)
	judges := make([]Config, len(losses))
	shares := make([]float64, len(losses))
	base := len(srs[0].TrialLog)
	for i, l := range losses {
		judges[i], judges[i].LossPercent, shares[i] = *cfg, l, l/100
	}
	var (
		saturated float64       // the far end's rate, timed in a trial that lost
		marginal  float64       // the rate whose trial failed on backlog alone and was run once more
		untested  = math.Inf(1) // the lowest rate stalled in every time it ran
		n         int
	)
	s.untested = false
	final := max(cfg.Confirm, cfg.Trial) // a trial this long confirms a rate
	var held mlrsearch.State             // where the search stood at the trial whose telling is held
	trial := func(ctx context.Context, t mlrsearch.Trial) (mlrsearch.Outcome, error) {
		// A trial after the one held (the search went on past what its
		// structure counted): tell that one now.
		s.tellMulti(size, rep, held)
		spec := Spec{Size: size, RatePPS: t.Rate, Duration: t.Duration}
		o, err := s.trial(ctx, spec)
		if err != nil || ctx.Err() != nil {
			return mlrsearch.Outcome{}, err
		}
		n++
		out := mlrsearch.Outcome{Pass: make([]bool, len(losses))}
		vs := make([]string, len(losses))
		for i := range losses {
			vs[i] = judges[i].Verdict(spec, o)
			out.Pass[i] = vs[i] == VerdictPass
			out.Spoiled = out.Spoiled || vs[i] == VerdictStall
		}
		s.stalled = out.Spoiled
		v := vs[0]
		if _, seen := s.looked[size]; n == 1 && !seen && t.Rate >= top {
			// A size the survey did not see (one bisecting a
			// cliff): its own first trial tells its search's kind.
			s.see(size, spec, v, o)
		}
		if v == VerdictLoss && o.ServicePPS > 0 {
			saturated = max(saturated, o.ServicePPS)
		}
		if v == VerdictPace && !out.Spoiled && marginal != t.Rate && o.ServicePPS > 0 && (t.Final || t.Rate <= saturated) {
			// As in search: a reflector's trial failed on the timing
			// of its own rate alone, which a starved host shifts:
			// run it once more before going below it.
			marginal, out.Spoiled = t.Rate, true
		}
		if out.Spoiled && vs[0] == VerdictStall && t.Again >= cfg.StallRetries {
			untested = min(untested, t.Rate) // mlrsearch's Untested
			s.untested = true
		}
		switch {
		case v != VerdictPass && v != VerdictStall:
			// What the far end delivered, or this host offered
			// (host-limited): the search jumps under it.
			out.Delivered = delivered(v, o)
		case v == VerdictStall && o.ServicePPS > 0:
			// A reflector timed at its own rate while it held a
			// queue: that rate, whatever our sender did.
			out.Delivered = delivered(VerdictLoss, o)
		}
		// The strictest criterion's entry last: it is the one the
		// progress tells, with every criterion's verdict.
		for i := len(losses) - 1; i >= 0; i-- {
			rec := s.logTrial(srs[i], spec, o, vs[i], size, rep, n, t.Duration >= final, bisected)
			rec.Phase, rec.Reused = t.Phase+1, i > 0
		}
		if s.told != nil {
			s.told.Verdicts, s.told.Phase = vs, t.Phase+1
		}
		return out, nil
	}
	mc := cfg.mlrConfig(size, shares)
	mc.OnTrial = func(_ mlrsearch.Trial, _ mlrsearch.Outcome, st mlrsearch.State) {
		if n, _ := st.Left(); n == 0 && s.holdTell {
			// Likely the search's last trial: told by size
			// once the size is judged, or before the next.
			held = st
			return
		}
		s.tellMulti(size, rep, st)
	}
	res, err := mlrsearch.Search(ctx, mc, trial)
	if !s.holdTell {
		s.tellMulti(size, rep, mlrsearch.State{})
	}
	if err != nil {
		return nil, err
	}
	found := make([]search, len(losses))
	for i, b := range res.Bounds {
		found[i] = settle(b, top, srs[i].TrialLog[base:], n, untested, s.cfg.Resolution)
	}
	return found, nil
}

// settle is what a multi-rate search found for one criterion, from its
// bounds and its trial log (one entry per trial, in the search's order),
// with untested the lowest rate no trial could test and res the
// resolution.
func settle(b mlrsearch.Bound, top float64, log []result.SweepTrial, n int, untested, res float64) search {
	f := search{trials: n}
	fl := failsIn(log, res)
	fl.host = min(fl.host, untested)
	if b.LowerTrial < 0 || b.Lower == 0 {
		f.tried, f.limited = 0, fl.host < fl.device
		return f
	}
	t := &log[b.LowerTrial]
	if b.Confirmed {
		f.confirmAt(b.Lower, top, t, fl)
		return f
	}
	f.tried, f.atMax = b.Lower, b.Lower >= top
	f.confirm, f.rate, f.held = t, t.DeliveredPPS, held(t)
	f.limited = fl.limited(f)
	return f
}

// tellMulti tells Config.OnTrial the progress of the latest trial, with
// the time the multi-rate search of size (repetition rep) standing at st
// still needs (none at its end: st zero), and the searches after it.
func (s *sweeper) tellMulti(size, rep int, st mlrsearch.State) {
	p := s.told
	if p == nil {
		return
	}
	s.told = nil
	var cur eta.Part
	if st.Lower != nil {
		// What its structure still needs, or more: what a search of its
		// kind (as its survey trial foretells) took in this run, less
		// what this one has run. On a host with two busy loops the
		// later searches' confirmations failed, and their structure
		// alone read half of what they took.
		// (A lone search, SearchTargets's, has no run to learn from.)
		n, d := st.Left()
		cur = eta.Part{Class: unitSearch, Trials: n, Nominal: d}
		if !s.lone {
			kind, prior := unitSearch, s.est.Expect(unitSearch, unitSearch, s.searchPrior(size))
			if l, ok := s.looked[size]; ok {
				kind, prior = s.lookKind(l), s.lookPrior(size, l, prior)
			}
			cur = s.est.Rest(kind, unitSearch, prior, cur)
		}
	}
	p.SearchLeft = cur
	p.Left = s.est.Left(append(eta.Work{cur}, s.after(size, rep)...))
	s.cfg.OnTrial(*p)
}

// MultiPrior is what a multi-rate search of size under n criteria is
// expected to take before one has run: its structure's count of trials
// and their nominal length (mlrsearch's State.Left before its first trial).
func MultiPrior(cfg Config, size, n int) (trials float64, nominal time.Duration) {
	cfg.defaults()
	mc := cfg.mlrConfig(size, make([]float64, n))
	return mc.Start().Left()
}

// mlrConfig is the multi-rate search of size under the criteria shares
// (the share of a trial's load each allows lost), with c's trials: from
// the highest rate down to a thousandth of it, trials of c.Trial growing
// to the c.Confirm that confirms, intervals narrowed to c.Resolution.
func (c *Config) mlrConfig(size int, shares []float64) mlrsearch.Config {
	top := c.MaxPPS(size)
	return mlrsearch.Config{Losses: shares, Min: top / 1000, Max: top, Initial: c.Trial, Final: max(c.Confirm, c.Trial),
		Phases: Phases, Goal: c.Resolution, Retries: c.StallRetries, MaxTrials: c.MaxTrials}
}

// multiAfter is what a multi-rate search of size under one criterion is
// expected to take when its first trial, at the highest rate, failed with
// the far end delivering pps (0: unknown): that trial, and its structure's
// count of the trials after it (mlrsearch's Config.After). With the far
// end's rate known the search jumps just under it and narrows from there:
// against a 10 Mbit/s reflector, with 1 s trials and a 10 s confirmation,
// 6 trials (19 s of trials), as such a search runs on a quiet host.
func multiAfter(cfg Config, size int, pps float64) eta.Part {
	cfg.defaults()
	mc := cfg.mlrConfig(size, []float64{cfg.LossPercent / 100})
	n, d := mc.After(mlrsearch.Outcome{Pass: []bool{false}, Delivered: pps}).Left()
	return eta.Part{Class: unitSearch, Trials: n + 1, Nominal: d + mc.Duration(0)}
}
