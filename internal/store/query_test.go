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
