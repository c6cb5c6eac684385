package store

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// Kinds are the kinds of run a store holds: the values Query.Kind takes.
var Kinds = []string{KindTest, KindPing, KindLatency, result.KindUnderLoad, KindMatrix, KindSweep, KindRFC2544}

// Query is a listing's choices as typed (history's --label, --since,
// --kind and --limit); Filter checks them.
type Query struct {
	// Labels are k=v labels a run must all carry.
	Labels []string
	// Since is a duration back from now (30m, 24h, 7d, 2w) or a date
	// (2026-11-30, RFC 3339); empty: no limit.
	Since string
	// Kind is one of Kinds; empty: every kind.
	Kind string
	// Limit keeps only the newest Limit runs; 0: all.
	Limit int
	// Prune asks to delete runs instead of listing them: of those Labels
	// and Kind select, the ones older than OlderThan (a duration or a
	// date, as Since) and those beyond the newest Keep.
	Prune     bool
	OlderThan string
	Keep      int
}

// PruneRule checks a --prune query and turns it into a Prune.
func (q Query) PruneRule(now time.Time) (Prune, error) {
	switch {
	case q.Since != "" || q.Limit != 0:
		return Prune{}, fmt.Errorf("--prune takes --older-than and --keep, not --since or --limit")
	case q.Keep < 0:
		return Prune{}, fmt.Errorf("invalid --keep %d", q.Keep)
	case q.OlderThan == "" && q.Keep == 0:
		return Prune{}, ErrNothingToPrune
	}
	f, err := q.Filter(now)
	if err != nil {
		return Prune{}, err
	}
	before, err := parseTime("--older-than", q.OlderThan, now)
	if err != nil {
		return Prune{}, err
	}
	return Prune{Filter: f, Before: before, Keep: q.Keep}, nil
}

// Filter checks the query and turns it into a Filter, with Since counted
// back from now. An error names what was mistyped.
func (q Query) Filter(now time.Time) (Filter, error) {
	labels, err := ParseLabels(q.Labels)
	if err != nil {
		return Filter{}, err
	}
	since, err := parseTime("--since", q.Since, now)
	if err != nil {
		return Filter{}, err
	}
	if q.Limit < 0 {
		return Filter{}, fmt.Errorf("invalid --limit %d", q.Limit)
	}
	if q.Kind != "" && !slices.Contains(Kinds, q.Kind) {
		return Filter{}, fmt.Errorf("invalid --kind %q: want one of %s", q.Kind, strings.Join(Kinds, ", "))
	}
	return Filter{Labels: labels, Since: since, Kind: q.Kind, Limit: q.Limit}, nil
}

// parseTime turns flag's value into a time: a duration back from now
// (with d and w for days and weeks), or a date.
func parseTime(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	bad := fmt.Errorf("invalid %s %q: want a duration like 24h, 7d, 2w or a date like 2026-11-30", flag, s)
	mult := time.Duration(0)
	switch {
	case strings.HasSuffix(s, "d"):
		mult = 24 * time.Hour
	case strings.HasSuffix(s, "w"):
		mult = 7 * 24 * time.Hour
	}
	if mult == 0 {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return time.Time{}, bad
		}
		return now.Add(-d), nil
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(s[:len(s)-1]), 64)
	if err != nil || n < 0 || n > 1e5 {
		return time.Time{}, bad
	}
	return now.Add(-time.Duration(n * float64(mult))), nil
}
