package rfc2544

import (
	"fmt"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// stallRetries is how many times the throughput search runs a trial this
// host spoiled again at the same rate before the rate counts as one this
// host could not test (sweep.Config.StallRetries).
const stallRetries = 2

// searchTrials bounds one throughput search: sweep's 14, and room for the
// retries of four rates this host spoiled.
const searchTrials = 14 + 4*stallRetries

// discounted lists the trials of a search's log that the search discounted
// as this host's (verdict host_stalled; trials reused from another search
// are listed there), and says what followed each: the rate run again, or
// counted as host-limited after stallRetries+1 in a row, or nothing (the
// search ended).
func discounted(j *sweep.StallJudge, name string, sr *result.SweepSize) []result.RFC2544Discounted {
	var out []result.RFC2544Discounted
	run := 0
	for i, t := range sr.TrialLog {
		if t.Reused || t.Verdict != sweep.VerdictStall {
			run = 0
			continue
		}
		run++
		d := result.RFC2544Discounted{Search: name, RatePPS: t.RatePPS, TrialS: held(t), Lost: t.Lost + t.Unreported,
			SenderLagMS: t.MaxLagS * 1e3, HostDrops: t.HostDrops, Then: "run_again"}
		spec := sweep.Spec{Size: sr.Size, RatePPS: t.RatePPS}
		if d.Reason = j.Spoiled(spec, t.SweepOutcome); d.Reason == "" {
			d.Reason = fmt.Sprintf("our sender fell %.1f ms behind its schedule and caught up in a burst that holds the loss (sweep's stall rule)", d.SenderLagMS)
		}
		switch {
		case run > stallRetries:
			d.Then, run = "host_limited", 0
		case i+1 == len(sr.TrialLog):
			d.Then = "search_ended" // out of trials, or interrupted
		}
		d.QueueMS = j.Room() * 1e3
		out = append(out, d)
	}
	return out
}

// held is a trial's length in seconds: as asked, or its send window.
func held(t result.SweepTrial) float64 {
	if t.TrialS > 0 {
		return t.TrialS
	}
	return t.SendSeconds
}
