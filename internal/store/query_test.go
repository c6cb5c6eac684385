package store

import (
	"strings"
	"testing"
	"time"
)

// A query becomes a filter, --since counted back from now; what is
// mistyped is named.
func TestQueryFilter(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	f, err := Query{Labels: []string{"link=usb"}, Since: "2d", Kind: KindSweep, Limit: 3}.Filter(now)
	if err != nil || f.Labels["link"] != "usb" || !f.Since.Equal(now.Add(-48*time.Hour)) || f.Kind != KindSweep || f.Limit != 3 {
		t.Fatalf("Filter() = %+v, %v", f, err)
	}
	if f, err := (Query{Since: "2026-11-30"}).Filter(now); err != nil || !f.Since.Equal(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("a date: %+v, %v", f, err)
	}
	for q, want := range map[*Query]string{
		{Since: "yesterday"}:          "invalid --since",
		{Since: "-3h"}:                "invalid --since",
		{Limit: -1}:                   "invalid --limit",
		{Kind: "sweeps"}:              `invalid --kind "sweeps"`,
		{Labels: []string{"nolabel"}}: "",
	} {
		_, err := q.Filter(now)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", *q, err, want)
		}
	}
}

// TestQueryPruneRule: --prune takes an age, a count or both, with the
// listing's --label and --kind, and refuses --since and --limit, which
// would read as which runs to keep.
func TestQueryPruneRule(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	p, err := Query{Prune: true, OlderThan: "30d", Keep: 100, Kind: KindTest, Labels: []string{"lab=a"}}.PruneRule(now)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Before.Equal(now.Add(-30*24*time.Hour)) || p.Keep != 100 || p.Filter.Kind != KindTest || p.Filter.Labels["lab"] != "a" {
		t.Errorf("rule %+v", p)
	}
	for q, want := range map[*Query]string{
		{Prune: true}:                           "needs an age",
		{Prune: true, Keep: -1}:                 "invalid --keep",
		{Prune: true, Keep: 5, Since: "1d"}:     "not --since",
		{Prune: true, Keep: 5, Limit: 3}:        "not --since or --limit",
		{Prune: true, OlderThan: "yesterday"}:   "invalid --older-than",
		{Prune: true, Keep: 5, Kind: "nothing"}: "invalid --kind",
	} {
		if _, err := q.PruneRule(now); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", *q, err, want)
		}
	}
}
