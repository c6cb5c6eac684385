package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/rfc2544/findings"
)

// BoundError is Lookup's error for a figure the document holds only as a
// bound: an RFC 2544 back-to-back search whose bursts this host's sending
// qualified (findings.SizeBound) carried at least AtLeast and at most
// AtMost frames (or microseconds of line time); its frames figure is no
// result. It wraps ErrNull.
type BoundError struct {
	Path            string
	AtLeast, AtMost float64 // 0 and +Inf where the bursts set no bound
	Words           string  // the bound as the tables print it (">= 12", "12-46")
}

func (e *BoundError) Error() string {
	return fmt.Sprintf("figure %s is a bound, not a result: the back-to-back search shows %s (this host's sending qualified its bursts; docs/rfc2544.md)", e.Path, e.Words)
}

func (e *BoundError) Unwrap() error { return ErrNull }

// notMeasured is a BoundError's words when the bursts bound nothing.
const notMeasured = "no bound (not measured)"

// boundKeys are the back-to-back figures of an RFC 2544 size that are no
// result when its search ended with a bound, by where they sit (a key of
// the size, or of its back_to_back object) and whether they are in line
// time (microseconds) rather than frames.
var boundKeys = []struct {
	inner, key string
	us         bool
}{{"", "back_to_back_frames", false}, {"", "back_to_back_us", true},
	{"back_to_back", "min_frames", false}, {"back_to_back", "max_frames", false}}

// nullBounds sets to null the back-to-back figures of an RFC 2544 size
// whose search ended with a bound, each beside a KEY_bound object that
// Lookup turns into a BoundError: a criterion is judged on the bound, not
// on a figure the table does not print as a result.
func nullBounds(size map[string]any) {
	raw, err := json.Marshal(size)
	if err != nil {
		return
	}
	var sr result.RFC2544Size
	if json.Unmarshal(raw, &sr) != nil {
		return
	}
	bb, ok := findings.SizeBound(sr)
	if !ok || bb.Bound == result.RFC2544BoundExact {
		return
	}
	frames, line, _ := findings.Cell(sr, ">= ", "<= ", "-")
	for _, k := range boundKeys {
		obj := size
		if k.inner != "" {
			if obj, ok = size[k.inner].(map[string]any); !ok {
				continue
			}
		}
		scale, words := 1.0, frames+" frames"
		if k.us && sr.LinePPS > 0 {
			scale, words = 1e6/sr.LinePPS, line+" µs of line time"
		}
		b := map[string]any{"words": words}
		switch bb.Bound {
		case result.RFC2544BoundAtLeast:
			b["at_least"] = float64(bb.AtLeastFrames) * scale
		case result.RFC2544BoundAtMost:
			b["at_most"] = float64(bb.AtMostFrames) * scale
		case result.RFC2544BoundBetween:
			b["at_least"], b["at_most"] = float64(bb.AtLeastFrames)*scale, float64(bb.AtMostFrames)*scale
		default:
			b["words"] = notMeasured
		}
		obj[k.key], obj[k.key+"_bound"] = nil, b
	}
}

// boundOfKey turns the KEY_bound object beside a null figure (nullBounds)
// into a BoundError for path, or nil when there is none.
func boundOfKey(parent any, key, path string) error {
	obj, _ := parent.(map[string]any)
	b, ok := obj[key+"_bound"].(map[string]any)
	if !ok {
		return nil
	}
	e := &BoundError{Path: path, AtMost: math.Inf(1)}
	e.Words, _ = b["words"].(string)
	if v, ok := b["at_least"].(float64); ok {
		e.AtLeast = v
	}
	if v, ok := b["at_most"].(float64); ok {
		e.AtMost = v
	}
	return e
}

// judgeBound judges criterion c, held to threshold t, on a figure known
// only as a bound: PASS when every value the bound allows holds, FAIL when
// none does, else ERROR (the bound cannot tell). The note says it is a
// bound either way.
func judgeBound(v Verdict, be *BoundError, t float64) Verdict {
	c := v.Criterion
	v.ValueText = be.Words
	lo, hi := holds(be.AtLeast, c.Op, t), holds(be.AtMost, c.Op, t)
	why := "this host's sending qualified the back-to-back bursts, so the search ended with a bound (docs/rfc2544.md)"
	switch {
	case be.Words == notMeasured:
		v.Status, v.Note = Error, why+" and its bursts bound nothing; a quieter host measures it"
	case lo && hi:
		v.Status, v.Note = Pass, "every value the bound allows holds the criterion: "+why
	case !lo && !hi:
		v.Status, v.Note = Fail, "no value the bound allows holds the criterion: "+why
	default:
		v.Status, v.Note = Error, "the bound cannot tell whether the criterion holds: "+why+"; a quieter host measures it"
	}
	return v
}

// asBound says whether err is a BoundError, and which.
func asBound(err error) (*BoundError, bool) {
	var be *BoundError
	ok := errors.As(err, &be)
	return be, ok
}
