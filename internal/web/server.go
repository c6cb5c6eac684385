package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/internal/compare"
	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/version"
)

//go:embed assets
var assets embed.FS

// Config configures a dashboard.
type Config struct {
	// History holds the finished runs shown; nil keeps the server's own
	// results in a Memory with the default bounds. The server adds its
	// results to a Memory given here too.
	History History
	// Probe says what /probe may do (nothing by default).
	Probe ProbeConfig
	// ViewerBuffer and MaxViewers bound the event streams (see NewHub).
	ViewerBuffer, MaxViewers int
	// Labels are added to every run kept in a Memory.
	Labels map[string]string
	// OnLog receives operational messages (a result that could not be
	// kept); nil drops them.
	OnLog func(msg string)
}

// Server is a dashboard: the live hub, the metrics, the history and the
// HTTP handlers over them.
type Server struct {
	cfg     Config
	hub     *Hub
	metrics *Metrics
	history History
	memory  *Memory // the History when it is a Memory the server feeds
	slots   chan struct{}
	renders chan struct{} // chart drawing slots (maxChartRenders)
	started time.Time
}

// New returns a dashboard.
func New(cfg Config) *Server {
	cfg.Probe.applyDefaults()
	s := &Server{cfg: cfg, hub: NewHub(cfg.ViewerBuffer, cfg.MaxViewers), history: cfg.History,
		slots: make(chan struct{}, cfg.Probe.MaxConcurrent), renders: make(chan struct{}, maxChartRenders), started: time.Now().UTC()}
	if s.history == nil {
		s.history = NewMemory(0, 0)
	}
	s.memory, _ = s.history.(*Memory)
	s.metrics = NewMetrics(s.hub.Active)
	return s
}

// Hub returns the live hub.
func (s *Server) Hub() *Hub { return s.hub }

// Metrics returns the server's metrics.
func (s *Server) Metrics() *Metrics { return s.metrics }

func (s *Server) logf(format string, a ...any) {
	if s.cfg.OnLog != nil {
		s.cfg.OnLog(fmt.Sprintf(format, a...))
	}
}

// Attach makes the dashboard follow the tests of a session server built
// from cfg: it wraps cfg's callbacks, calling the ones already set first
// (so a result has its Link, from --medium, before it is kept).
func (s *Server) Attach(cfg *session.ServerConfig) {
	prevStart, prevInterval, prevGroup, prevResult := cfg.OnTestStart, cfg.OnInterval, cfg.OnGroupInterval, cfg.OnResult
	cfg.OnTestStart = func(id int, r *result.Result) {
		if prevStart != nil {
			prevStart(id, r)
		}
		s.TestStarted(id, r)
	}
	cfg.OnInterval = func(id int, in result.Interval) {
		if prevInterval != nil {
			prevInterval(id, in)
		}
		s.hub.Interval(id, in)
	}
	cfg.OnGroupInterval = func(group int, streams []session.StreamInterval, sum *result.Interval) {
		switch {
		case prevGroup != nil:
			prevGroup(group, streams, sum)
		case prevInterval != nil:
			for _, st := range streams {
				prevInterval(st.ID, st.Interval)
			}
		}
		switch {
		case sum != nil:
			s.hub.Interval(group, *sum)
		case len(streams) == 1:
			s.hub.Interval(group, streams[0].Interval)
		}
	}
	cfg.OnResult = func(id int, r *result.Result) {
		if prevResult != nil {
			prevResult(id, r)
		}
		s.TestFinished(id, r)
	}
}

// TestStarted records a test the server accepted.
func (s *Server) TestStarted(id int, r *result.Result) {
	s.metrics.Started(r)
	s.hub.Start(id, r.Role, r)
}

// TestFinished records a finished test: counts it, keeps it (in the
// Memory, when the History is one) and ends it on the live page.
func (s *Server) TestFinished(id int, r *result.Result) {
	s.metrics.Finished(r, time.Now())
	var runID int64
	if s.memory != nil {
		var err error
		if runID, err = s.memory.Add(r, s.cfg.Labels); err != nil {
			s.logf("dashboard: test %d not kept: %v", id, err)
		}
	}
	end := LiveEnd{ID: id, RunID: runID, Summary: Summarize(r), Pending: s.memory == nil}
	for _, st := range r.Streams {
		if st.ID != id {
			end.Streams = append(end.Streams, st.ID)
		}
	}
	s.hub.End(end, append([]int{id}, end.Streams...)...)
}

// Saved tells the live page that a results store (the History, when it is
// not the Memory) saved test id as run runID, or, runID 0, could not
// (warning says why): the page links the ended test to its run.
func (s *Server) Saved(id int, runID int64, warning string) {
	s.hub.Saved(id, runID, warning)
}

// EchoFinished records an echo (request/response latency) test the
// server answered, in /metrics. Give it to echo.ServerConfig.OnSession.
func (s *Server) EchoFinished(ss echo.Session) {
	s.metrics.EchoFinished(ss, time.Now())
}

// Handler returns the dashboard's HTTP handler: the page, /api/…,
// /metrics and /probe.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.Handle("GET /", files)
	mux.HandleFunc("GET /api/server", s.apiServer)
	mux.HandleFunc("GET /api/live", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, s.hub.Live()) })
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("GET /api/runs", s.apiRuns)
	mux.HandleFunc("GET /api/live/{id}/charts", s.apiLiveCharts)
	mux.HandleFunc("GET /api/live/{id}/charts/{n}", s.apiLiveCharts)
	mux.HandleFunc("GET /api/runs/{id}", s.apiRun)
	mux.HandleFunc("GET /api/runs/{id}/charts", s.apiRunCharts)
	mux.HandleFunc("GET /api/runs/{id}/charts/{n}", s.apiRunCharts)
	mux.HandleFunc("GET /api/compare", s.apiCompare)
	mux.HandleFunc("GET /api/compare/charts", s.apiCompareCharts)
	mux.Handle("GET /metrics", s.metrics.Handler())
	mux.Handle("GET /probe", s.cfg.Probe.probeHandler(s.slots, func(r *result.Result) {
		if s.memory != nil {
			if _, err := s.memory.Add(r, map[string]string{"source": "probe"}); err != nil {
				s.logf("dashboard: probe result not kept: %v", err)
			}
		}
	}))
	return securityHeaders(mux)
}

// securityHeaders forbids loading anything from elsewhere: the page uses
// only its own embedded files.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		http.Error(w, "encoding the answer: "+err.Error(), http.StatusInternalServerError)
	}
}

// ServerInfo is the answer of /api/server.
type ServerInfo struct {
	Version   string    `json:"version"`
	StartedAt time.Time `json:"started_at"`
	HubStats
	// KeptRuns says where the history comes from: "memory" (this
	// server's own results since it started, bounded) or "store".
	History string `json:"history"`
	// ForgottenRuns counts runs the memory history dropped to stay
	// within its bounds.
	ForgottenRuns int64 `json:"forgotten_runs"`
	// ProbeAllow lists the networks /probe may test.
	ProbeAllow []string `json:"probe_allow"`
}

func (s *Server) apiServer(w http.ResponseWriter, _ *http.Request) {
	info := ServerInfo{Version: version.String(), StartedAt: s.started, HubStats: s.hub.Stats(), History: "store", ProbeAllow: []string{}}
	if s.memory != nil {
		info.History, info.ForgottenRuns = "memory", s.memory.Forgotten()
	}
	for _, p := range s.cfg.Probe.Allow {
		info.ProbeAllow = append(info.ProbeAllow, p.String())
	}
	writeJSON(w, info)
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	labels, err := ParseLabels(q["label"])
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f := Filter{Labels: labels, Limit: 200}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			http.Error(w, fmt.Sprintf("invalid limit %q: want 1-10000", v), http.StatusBadRequest)
			return
		}
		f.Limit = n
	}
	runs, err := s.history.List(r.Context(), f)
	if err != nil {
		http.Error(w, "listing runs: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if runs == nil {
		runs = []RunSummary{}
	}
	writeJSON(w, runs)
}

func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.Error(w, fmt.Sprintf("invalid run id %q", r.PathValue("id")), http.StatusBadRequest)
		return
	}
	run, err := s.history.Get(r.Context(), id)
	switch {
	case errors.Is(err, ErrNotFound):
		http.Error(w, err.Error(), http.StatusNotFound)
	case err != nil:
		http.Error(w, "reading run: "+err.Error(), http.StatusInternalServerError)
	default:
		if _, ms, err := compare.Metrics(run.Result); err == nil {
			run.Figures = ms
		}
		writeJSON(w, run)
	}
}

// Event stream timing.
const (
	heartbeat    = 15 * time.Second
	writeTimeout = 10 * time.Second
)

// events streams the live events (text/event-stream) until the viewer
// leaves or falls too far behind.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	v, err := s.hub.subscribe()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer s.hub.unsubscribe(v)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	for {
		select {
		case b := <-v.ch:
			if !write(b) {
				return
			}
		case <-tick.C:
			if !write([]byte(": heartbeat\n\n")) {
				return
			}
		case <-v.gone:
			// Dropped for falling behind: say so, and end the stream.
			write([]byte("event: dropped\ndata: {}\n\n"))
			return
		case <-r.Context().Done():
			return
		}
	}
}

// ListenAndServe serves the dashboard on ln until ctx ends, then shuts
// it down (open event streams end with ctx).
func (s *Server) ListenAndServe(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving the dashboard on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		return nil
	}
}
