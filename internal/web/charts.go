package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/report/htmlreport"
	"github.com/wirebench/wirebench/internal/result"
)

// The dashboard's charts are the HTML report's (internal/report/htmlreport):
// drawn here as SVG by the same Go code that draws `wirebench report`, and
// inserted by the page as they come. The page draws nothing itself.

// Chart is one chart as /api/…/charts answer it.
type Chart struct {
	// ID names the chart within the answer ("chart-01-run-3-throughput-over-time").
	ID    string `json:"id"`
	Title string `json:"title"`
	// Caption says what the chart cannot show (empty when nothing).
	Caption string `json:"caption,omitempty"`
	// SVG is the chart, an <svg> element ready to insert in the page:
	// its groups of class wb-series, wb-point, wb-bar and wb-cliff carry
	// the data drawn (docs/report.md).
	SVG string `json:"svg,omitempty"`
	// Error says why the chart could not be drawn (SVG is then empty).
	Error string `json:"error,omitempty"`
}

// maxChartRenders bounds the charts drawn at once: drawing is CPU work,
// and many viewers of many live tests must not starve the tests.
const maxChartRenders = 2

// render draws charts as SVG, one render slot at a time, until ctx ends.
func (s *Server) render(ctx context.Context, charts []*htmlreport.Chart) ([]Chart, error) {
	select {
	case s.renders <- struct{}{}:
		defer func() { <-s.renders }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out := make([]Chart, 0, len(charts))
	for _, c := range charts {
		ch := Chart{ID: c.ID, Title: c.Title, Caption: c.Caption}
		if b, err := c.SVG(); err != nil {
			// One chart that cannot be drawn does not lose the others.
			ch.Error = err.Error()
		} else {
			ch.SVG = string(presentationAttrs(b))
		}
		out = append(out, ch)
	}
	return out, nil
}

// styleRE matches a style attribute as gonum's SVG canvas writes it.
var styleRE = regexp.MustCompile(`style="([^"]*)"`)

// presentationAttrs rewrites each style="k:v;…" of svg as SVG presentation
// attributes k="v" …: the dashboard's Content-Security-Policy forbids
// inline styles (style-src 'self'), and gonum writes only properties that
// are also presentation attributes (fill, stroke, stroke-width,
// stroke-dasharray, font-…).
func presentationAttrs(svg []byte) []byte {
	return styleRE.ReplaceAllFunc(svg, func(m []byte) []byte {
		decl := styleRE.FindSubmatch(m)[1]
		var b strings.Builder
		for _, d := range strings.Split(string(decl), ";") {
			k, v, ok := strings.Cut(d, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || strings.ContainsAny(k, `"<>= `) {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, `%s="%s"`, k, v)
		}
		return []byte(b.String())
	})
}

// writeCharts answers with charts drawn, or with the error.
func (s *Server) writeCharts(w http.ResponseWriter, r *http.Request, charts []*htmlreport.Chart, err error) {
	if err != nil {
		http.Error(w, "drawing the charts: "+err.Error(), http.StatusUnprocessableEntity)
		return
	}
	out, err := s.render(r.Context(), charts)
	if err != nil {
		http.Error(w, "drawing the charts: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, out)
}

// writeOneSVG answers with the chart named by the request's {n} (its
// place in the list, from 1, with ".svg") as an SVG document.
func (s *Server) writeOneSVG(w http.ResponseWriter, r *http.Request, charts []*htmlreport.Chart, err error) {
	if err != nil {
		http.Error(w, "drawing the charts: "+err.Error(), http.StatusUnprocessableEntity)
		return
	}
	name := r.PathValue("n")
	n, perr := strconv.Atoi(strings.TrimSuffix(name, ".svg"))
	if perr != nil || !strings.HasSuffix(name, ".svg") || n < 1 {
		http.Error(w, fmt.Sprintf("invalid chart %q: want N.svg, N from 1", name), http.StatusBadRequest)
		return
	}
	if n > len(charts) {
		http.Error(w, fmt.Sprintf("chart %d: there are %d", n, len(charts)), http.StatusNotFound)
		return
	}
	out, err := s.render(r.Context(), charts[n-1:n])
	switch {
	case err != nil:
		http.Error(w, "drawing the chart: "+err.Error(), http.StatusServiceUnavailable)
	case out[0].Error != "":
		http.Error(w, "drawing the chart: "+out[0].Error, http.StatusUnprocessableEntity)
	default:
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = io.WriteString(w, out[0].SVG)
	}
}

// runDocument reads run id from the history as a report document; errors
// are httpErrors.
func (s *Server) runDocument(ctx context.Context, id int64) (htmlreport.Document, error) {
	run, err := s.history.Get(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return htmlreport.Document{}, httpError{http.StatusNotFound, err.Error()}
	case err != nil:
		return htmlreport.Document{}, fmt.Errorf("reading run %d: %w", id, err)
	}
	name := fmt.Sprintf("run %d", id)
	d, err := htmlreport.Decode(name, run.Result)
	if err != nil {
		return d, httpError{http.StatusUnprocessableEntity, err.Error()}
	}
	d.Labels, d.Run = run.Labels, name
	return d, nil
}

// httpFail answers err: its own status for an httpError, else 500.
func httpFail(w http.ResponseWriter, what string, err error) {
	var he httpError
	if errors.As(err, &he) {
		http.Error(w, he.msg, he.code)
		return
	}
	http.Error(w, what+": "+err.Error(), http.StatusInternalServerError)
}

// apiRunCharts answers /api/runs/ID/charts: the run's charts, as the
// report draws them (htmlreport.DashboardCharts); with one, N.svg, the
// N-th of them as an SVG document.
func (s *Server) apiRunCharts(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		http.Error(w, fmt.Sprintf("invalid run id %q", r.PathValue("id")), http.StatusBadRequest)
		return
	}
	d, err := s.runDocument(r.Context(), id)
	if err != nil {
		httpFail(w, "reading the run", err)
		return
	}
	charts, err := htmlreport.DashboardCharts(d)
	if r.PathValue("n") != "" {
		s.writeOneSVG(w, r, charts, err)
		return
	}
	s.writeCharts(w, r, charts, err)
}

// liveDocument is a test in progress as a test document: its test and
// the intervals so far (a result without its summaries yet).
func liveDocument(t LiveTest) (htmlreport.Document, error) {
	b, err := json.Marshal(struct {
		Schema    string            `json:"schema"`
		Kind      string            `json:"kind"`
		Role      string            `json:"role"`
		Test      result.Test       `json:"test"`
		Intervals []result.Interval `json:"intervals"`
	}{result.Schema, result.KindTest, t.Role, t.Test, t.Intervals})
	if err != nil {
		return htmlreport.Document{}, fmt.Errorf("encoding test %d: %w", t.ID, err)
	}
	return htmlreport.Decode(fmt.Sprintf("test %d", t.ID), b)
}

// apiLiveCharts answers /api/live/ID/charts: a test in progress's charts
// so far (N.svg: the N-th as an SVG document); 404 when the test is not
// (or no longer) in progress.
func (s *Server) apiLiveCharts(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		http.Error(w, fmt.Sprintf("invalid test number %q", r.PathValue("id")), http.StatusBadRequest)
		return
	}
	t, ok := s.hub.Test(id)
	if !ok {
		http.Error(w, fmt.Sprintf("test %d is not in progress", id), http.StatusNotFound)
		return
	}
	d, err := liveDocument(t)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	charts, err := htmlreport.DashboardCharts(d)
	if r.PathValue("n") != "" {
		s.writeOneSVG(w, r, charts, err)
		return
	}
	s.writeCharts(w, r, charts, err)
}

// apiCompareCharts answers /api/compare/charts?a=ID&b=ID: the report's
// comparison charts of the two runs, A the baseline (none for runs of
// kinds the report does not set side by side).
func (s *Server) apiCompareCharts(w http.ResponseWriter, r *http.Request) {
	ids, err := compareIDs(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var docs []htmlreport.Document
	for _, id := range ids {
		d, err := s.runDocument(r.Context(), id)
		if err != nil {
			httpFail(w, "reading the run", err)
			return
		}
		docs = append(docs, d)
	}
	charts, err := htmlreport.ComparisonCharts(docs)
	s.writeCharts(w, r, charts, err)
}
