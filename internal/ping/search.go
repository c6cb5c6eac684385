package ping

import (
	"context"

	"github.com/wirebench/wirebench/internal/result"
)

// Verdict is the outcome of one attempt to get an answer at one size.
type Verdict struct {
	Answered bool
	// Reason says why there was no answer ("no reply within 1s",
	// "needs fragmentation (path MTU 1500)").
	Reason string
	// Final means trying again cannot change the outcome (the kernel
	// refused to send), so no retries are spent on it.
	Final bool
}

// TryFunc makes one attempt at a payload size.
type TryFunc func(ctx context.Context, size int) Verdict

// Step is one size the search tried.
type Step = result.PingSearchStep

// SearchResult is what the reassembly search found.
type SearchResult = result.PingSearch

// Search finds the largest size a host answers, assuming it answers every
// size up to some limit and none above. It walks the ladder (ascending
// sizes) until the first size that fails, then bisects between the last
// size answered and that one. Each size gets up to tries attempts before it
// is called failed.
func Search(ctx context.Context, ladder []int, tries int, try TryFunc) SearchResult {
	if tries < 1 {
		tries = 1
	}
	res := SearchResult{Largest: -1}
	attempt := func(size int, phase string) (bool, string) {
		st := Step{Size: size, Phase: phase}
		for st.Tries < tries && ctx.Err() == nil {
			st.Tries++
			v := try(ctx, size)
			st.Answered, st.Reason = v.Answered, v.Reason
			if v.Answered || v.Final {
				break
			}
		}
		res.Steps = append(res.Steps, st)
		return st.Answered, st.Reason
	}
	good, bad, badReason := -1, 0, ""
	for _, size := range ladder {
		ok, why := attempt(size, "ladder")
		if ctx.Err() != nil {
			res.Incomplete = true
			break
		}
		if !ok {
			bad, badReason = size, why
			break
		}
		good = size
	}
	for good >= 0 && bad > good+1 && ctx.Err() == nil {
		mid := good + (bad-good)/2
		ok, why := attempt(mid, "bisect")
		if ctx.Err() != nil {
			res.Incomplete = true
			break
		}
		if ok {
			good = mid
		} else {
			bad, badReason = mid, why
		}
	}
	res.Largest, res.FirstFailing, res.FailReason = good, bad, badReason
	return res
}
