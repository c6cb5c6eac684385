package main

import "fmt"

// LossLimit is the most loss a trial may show and still count as loss-free
// (0.1 %, as a share).
const LossLimit = 0.001

// OfferedShare is how much of the offered rate a sender must actually send
// for its trial to count: a trial the sender could not keep up with did not
// test the rate it was asked for.
const OfferedShare = 0.95

// Trial is one UDP run at an offered rate, as the tools reported it.
type Trial struct {
	OfferedPPS float64 `json:"offered_pps"` // asked of the client (0: far more than it can do)
	SentPPS    float64 `json:"sent_pps"`    // datagrams per second the client says it sent
	RecvPPS    float64 `json:"recv_pps"`    // datagrams per second the server counted
	Sent       int64   `json:"sent"`        // datagrams the client sent
	Received   int64   `json:"received"`    // datagrams the server counted
	Lost       int64   `json:"lost"`        // datagrams the server counted as lost
	Loss       float64 `json:"loss"`        // the server's loss, as a share of what it expected
	RecvBPS    float64 `json:"recv_bps"`    // the server's goodput, bit/s, by its own clock
	CPUSeconds float64 `json:"cpu_s"`       // user+system of client and server
	Bytes      int64   `json:"bytes"`       // payload the server received
	Error      string  `json:"error,omitempty"`
}

// Passed says the trial was loss-free at the rate it was offered.
func (t Trial) Passed() bool {
	return t.Error == "" && t.Loss <= LossLimit && t.Received > 0 && t.SentPPS >= OfferedShare*t.OfferedPPS
}

// boundPassed is Search.Bound when the first trial, at the upper bound,
// passed.
const boundPassed = "upper bound passed"

// Search is the outcome of a binary search for the highest loss-free rate.
type Search struct {
	// BestPPS is the rate the server received at in the best loss-free
	// trial; 0 when no trial passed.
	BestPPS     float64 `json:"best_pps"`
	BestOffered float64 `json:"best_offered_pps"`
	Trials      []Trial `json:"trials"`
	// Bound says why the search stopped: "upper bound passed",
	// "converged", "trial limit".
	Bound string `json:"stopped"`
}

// SearchLossFree finds the highest offered rate (datagrams/s) up to upper
// at which trial reports no more than LossLimit loss, by bisection: first
// upper itself, then the midpoint of the highest passing and the lowest
// failing rate, until they are within tol of each other (a share of the
// failing rate) or maxTrials trials have run. trial runs one test.
func SearchLossFree(upper float64, maxTrials int, tol float64, trial func(pps float64) Trial) Search {
	var s Search
	if upper <= 0 || maxTrials < 1 {
		s.Bound = "no upper bound"
		return s
	}
	lo, hi := 0.0, upper
	rate := upper
	for len(s.Trials) < maxTrials {
		t := trial(rate)
		t.OfferedPPS = rate
		s.Trials = append(s.Trials, t)
		if t.Passed() {
			if t.RecvPPS > s.BestPPS {
				s.BestPPS, s.BestOffered = t.RecvPPS, rate
			}
			lo = rate
			if rate == upper {
				s.Bound = boundPassed
				return s
			}
		} else {
			hi = rate
		}
		if lo > 0 && (hi-lo) <= tol*hi {
			s.Bound = "converged"
			return s
		}
		// (With nothing passed yet, lo is 0: the rate halves, so a tool
		// far below the bound is found in a few trials.)
		rate = (lo + hi) / 2
	}
	s.Bound = fmt.Sprintf("trial limit (%d)", maxTrials)
	return s
}
