package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/compare"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// RunSummary is one finished run as a listing shows it.
type RunSummary struct {
	// ID names the run in its History (unique within it).
	ID int64 `json:"id"`
	// Kind is the "kind" of the run's result document ("test").
	Kind string `json:"kind"`
	// Labels are the run's k=v labels.
	Labels map[string]string `json:"labels"`
	// StartedAt is when the measurement started.
	StartedAt time.Time `json:"started_at"`
	// Target is the peer the run measured against, as "host:port".
	Target string `json:"target"`
	// Summary is one line in plain words for listings.
	Summary string `json:"summary"`
}

// Run is one finished run in full.
type Run struct {
	RunSummary
	// Result is the whole result document, as printed with --json.
	Result json.RawMessage `json:"result"`
	// Figures are the run's comparable figures (compare.Metrics), filled
	// in by /api/runs/ID for the kinds compare knows.
	Figures []compare.Metric `json:"figures,omitempty"`
}

// Filter selects runs. The zero Filter selects every run.
type Filter struct {
	// Labels a run must all carry with these values.
	Labels map[string]string
	// Limit caps the number of runs returned (the newest); 0: no cap.
	Limit int
}

// ErrNotFound is returned by History.Get when no run has the id.
var ErrNotFound = errors.New("no such run")

// History is what the dashboard needs from the runs kept: the results store
// (internal/store) or, without one, a Memory of the server's own results.
// Implementations are safe for concurrent use.
type History interface {
	// List returns the runs matching f, oldest first, without their
	// result documents.
	List(ctx context.Context, f Filter) ([]RunSummary, error)
	// Get returns one run in full, or an error wrapping ErrNotFound.
	Get(ctx context.Context, id int64) (*Run, error)
}

// Memory is a History held in memory: the newest runs, at most MaxRuns of
// them and MaxBytes of result documents, the oldest forgotten first.
type Memory struct {
	mu       sync.Mutex
	maxRuns  int
	maxBytes int
	runs     []Run // oldest first
	bytes    int
	nextID   int64
	dropped  int64
}

// Default bounds of a Memory.
const (
	DefaultMemoryRuns  = 1000
	DefaultMemoryBytes = 64 << 20
)

// NewMemory returns an empty Memory keeping at most maxRuns runs and
// maxBytes of their result documents (0 = the defaults).
func NewMemory(maxRuns, maxBytes int) *Memory {
	if maxRuns <= 0 {
		maxRuns = DefaultMemoryRuns
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMemoryBytes
	}
	return &Memory{maxRuns: maxRuns, maxBytes: maxBytes}
}

// Add keeps r (labelled with labels and those r.Labels derives from it)
// and returns its run id.
func (m *Memory) Add(r *result.Result, labels map[string]string) (int64, error) {
	all := r.Labels()
	for k, v := range labels {
		all[k] = v
	}
	return m.AddDoc(RunSummary{Kind: r.Kind, Labels: all, StartedAt: r.StartedAt, Target: r.Test.Peer, Summary: Summarize(r)}, r)
}

// AddDoc keeps any result document (a sweep, a matrix, …) under sum, whose
// ID it sets, and returns that run id.
func (m *Memory) AddDoc(sum RunSummary, doc any) (int64, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return 0, fmt.Errorf("encoding the %s result from %s: %w", sum.Kind, sum.Target, err)
	}
	if sum.Labels == nil {
		sum.Labels = map[string]string{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextID++
	sum.ID = m.nextID
	run := Run{RunSummary: sum, Result: b}
	m.runs = append(m.runs, run)
	m.bytes += len(b)
	for len(m.runs) > 1 && (len(m.runs) > m.maxRuns || m.bytes > m.maxBytes) {
		m.bytes -= len(m.runs[0].Result)
		m.runs[0] = Run{}
		m.runs = m.runs[1:]
		m.dropped++
	}
	return run.ID, nil
}

// Forgotten is the number of runs dropped to stay within the bounds.
func (m *Memory) Forgotten() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dropped
}

// List implements History.
func (m *Memory) List(_ context.Context, f Filter) ([]RunSummary, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []RunSummary
	for i := len(m.runs) - 1; i >= 0 && (f.Limit <= 0 || len(out) < f.Limit); i-- {
		if matches(m.runs[i].Labels, f.Labels) {
			out = append(out, m.runs[i].RunSummary)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// Get implements History.
func (m *Memory) Get(_ context.Context, id int64) (*Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.runs {
		if m.runs[i].ID == id {
			run := m.runs[i]
			return &run, nil
		}
	}
	return nil, fmt.Errorf("run %d: %w", id, ErrNotFound)
}

func matches(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// ParseLabels parses "key=value" labels into a map.
func ParseLabels(list []string) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range list {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("label %q: want key=value", s)
		}
		out[k] = v
	}
	return out, nil
}

// Summarize says what a test measured in one line: protocol, direction,
// the receiver's goodput, loss and jitter for UDP, and whether it ended in
// an error or with warnings.
func Summarize(r *result.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Test.Protocol, r.Test.Direction)
	switch rc := r.Receiver; {
	case rc != nil:
		fmt.Fprintf(&b, " %.2f Mbit/s", rc.BitsPerSecond/1e6)
		if r.Test.Protocol == result.UDP {
			lost, total := max(rc.Lost, 0), udpTotal(rc)
			loss := "n/a"
			if total > 0 {
				loss = fmt.Sprintf("%.2f %%", 100*float64(lost)/float64(total))
			}
			fmt.Fprintf(&b, ", %s loss (%d/%d), jitter %.3f ms", loss, lost, total, rc.JitterMS)
		}
	case r.Sender != nil:
		fmt.Fprintf(&b, " sent %.2f Mbit/s", r.Sender.BitsPerSecond/1e6)
	}
	if r.Link != nil && r.Link.TheoreticalBPS > 0 {
		fmt.Fprintf(&b, ", %.1f %% of %s", r.Link.PercentOfTheoretical, r.Link.Medium)
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "; error: %s", r.Error)
	} else if n := len(r.Warnings); n > 0 {
		b.WriteString("; " + units.Plural(n, "warning"))
	}
	return b.String()
}

// udpTotal is the number of datagrams a receiver expected, as the text
// report counts it: iperf's Total when known, else received plus lost.
func udpTotal(rc *result.Receiver) int64 {
	if rc.Total > 0 {
		return rc.Total
	}
	return rc.Packets + max(rc.Lost, 0)
}
