package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/compare"
)

// DefaultTolerance is the share of the baseline's figure within which
// /api/compare calls a change "same" when no tolerance is asked.
const DefaultTolerance = 0.05

// Comparison is the answer of /api/compare: run B set against run A, the
// baseline, figure by figure, as `wirebench compare A B` does.
type Comparison struct {
	A RunSummary `json:"a"`
	B RunSummary `json:"b"`
	// AName and BName name the two runs as `wirebench compare` does
	// (compare.Names): by the labels that tell them apart ("link=eth",
	// "link=usb"), else "run N".
	AName string `json:"a_name"`
	BName string `json:"b_name"`
	// Tolerance is the share of A within which a change is "same".
	Tolerance float64 `json:"tolerance"`
	// Metrics are the figures both runs have, in A's order.
	Metrics []JudgedDiff `json:"metrics"`
	// OnlyInA and OnlyInB are figures one run lacks.
	OnlyInA []string `json:"only_in_a"`
	OnlyInB []string `json:"only_in_b"`
	// Regressions names the figures that got worse.
	Regressions []string `json:"regressions"`
	// Verdict is "regression" when any figure got worse, else
	// "improvement" when any got better, else "same".
	Verdict  string   `json:"verdict"`
	Warnings []string `json:"warnings"`
}

// JudgedDiff is one figure of B against A with its verdict: compare.Better,
// compare.Worse or compare.Same (see compare.Judge).
type JudgedDiff struct {
	compare.Diff
	Verdict string `json:"verdict"`
}

// httpError is an error with the HTTP status it answers with.
type httpError struct {
	code int
	msg  string
}

func (e httpError) Error() string { return e.msg }

// Compare sets run b against run a. Its errors are httpErrors: 404 for a
// run that is not there, 422 for runs that cannot be compared.
func (s *Server) Compare(ctx context.Context, a, b int64, tolerance float64) (*Comparison, error) {
	c := &Comparison{Tolerance: tolerance, Metrics: []JudgedDiff{}, OnlyInA: []string{}, OnlyInB: []string{}, Regressions: []string{}, Warnings: []string{}}
	var metrics [2][]compare.Metric
	for i, id := range []int64{a, b} {
		run, err := s.history.Get(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			return nil, httpError{http.StatusNotFound, err.Error()}
		case err != nil:
			return nil, fmt.Errorf("reading run %d: %w", id, err)
		}
		kind, ms, err := compare.Metrics(run.Result)
		if err != nil {
			return nil, httpError{http.StatusUnprocessableEntity, fmt.Sprintf("run %d (%s): %v", id, kind, err)}
		}
		metrics[i] = ms
		var head struct {
			Warnings []string `json:"warnings"`
			Error    string   `json:"error"`
		}
		if json.Unmarshal(run.Result, &head) == nil {
			// A figure its own run did not trust is no firmer here.
			for _, w := range head.Warnings {
				c.Warnings = append(c.Warnings, fmt.Sprintf("run %d: %s", id, w))
			}
			if head.Error != "" {
				c.Warnings = append(c.Warnings, fmt.Sprintf("run %d ended early (%s): its figures are partial", id, head.Error))
			}
		}
		if i == 0 {
			c.A = run.RunSummary
		} else {
			c.B = run.RunSummary
		}
	}
	names := compare.Names([]compare.Run{{ID: c.A.ID, Labels: c.A.Labels}, {ID: c.B.ID, Labels: c.B.Labels}})
	c.AName, c.BName = names[0], names[1]
	if len(metrics[0]) == 0 {
		return nil, httpError{http.StatusUnprocessableEntity, fmt.Sprintf("the baseline run %d has no figures to compare", a)}
	}
	if c.A.Kind != c.B.Kind {
		c.Warnings = append(c.Warnings, fmt.Sprintf("run %d is a %s, the baseline run %d a %s: only the figures both have are compared", b, c.B.Kind, a, c.A.Kind))
	}
	if a == b {
		c.Warnings = append(c.Warnings, fmt.Sprintf("run %d is compared with itself", a))
	}
	diffs, onlyA, onlyB := compare.Pair(metrics[0], metrics[1])
	c.OnlyInA, c.OnlyInB = append(c.OnlyInA, onlyA...), append(c.OnlyInB, onlyB...)
	better := false
	for _, d := range diffs {
		v := compare.Judge(d, tolerance)
		c.Metrics = append(c.Metrics, JudgedDiff{Diff: d, Verdict: v})
		switch v {
		case compare.Worse:
			c.Regressions = append(c.Regressions, d.Name)
		case compare.Better:
			better = true
		}
	}
	switch {
	case len(c.Regressions) > 0:
		c.Verdict = "regression"
	case better:
		c.Verdict = "improvement"
	default:
		c.Verdict = "same"
	}
	return c, nil
}

// compareIDs reads the runs a and b of a comparison's query.
func compareIDs(r *http.Request) ([2]int64, error) {
	q := r.URL.Query()
	var ids [2]int64
	for i, name := range []string{"a", "b"} {
		v := q.Get(name)
		if v == "" {
			return ids, fmt.Errorf("missing %s: want %s?a=RUN&b=RUN (run ids)", name, r.URL.Path)
		}
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id < 1 {
			return ids, fmt.Errorf("invalid run id %s=%q: want a positive whole number", name, v)
		}
		ids[i] = id
	}
	return ids, nil
}

// apiCompare answers /api/compare?a=ID&b=ID[&tolerance=5%].
func (s *Server) apiCompare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ids, err := compareIDs(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	tol := DefaultTolerance
	if v := q.Get("tolerance"); v != "" {
		x, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
		if err != nil || !(x >= 0 && x <= 100) {
			http.Error(w, fmt.Sprintf("invalid tolerance %q: want a percentage from 0 to 100, such as 5%%", v), http.StatusBadRequest)
			return
		}
		tol = x / 100
	}
	c, err := s.Compare(r.Context(), ids[0], ids[1], tol)
	var he httpError
	switch {
	case errors.As(err, &he):
		http.Error(w, he.msg, he.code)
	case err != nil:
		http.Error(w, "comparing runs: "+err.Error(), http.StatusInternalServerError)
	default:
		writeJSON(w, c)
	}
}
