package result

import (
	"encoding/json"
	"time"
)

// Kinds of the documents about saved runs: one run's record (show
// --json) and a listing of runs (history --json).
const (
	KindRun     = "run"
	KindHistory = "history"
)

// Run is one saved run: the record a results store keeps of it.
type Run struct {
	// ID is given by the store when the run is saved; 0 before.
	ID int64 `json:"id"`
	// Kind says what the run was: "test", "ping", "request-response",
	// "under-load", "matrix", "sweep", ...
	Kind string `json:"kind"`
	// Labels are the user's k=v labels (--label device=pic32).
	Labels map[string]string `json:"labels"`
	// StartedAt is when the measurement started; SavedAt when it was saved.
	StartedAt time.Time `json:"started_at"`
	SavedAt   time.Time `json:"saved_at"`
	// Version is the wirebench version that measured.
	Version string `json:"version"`
	// Target is the peer the run measured against ("192.0.2.1:5001"), or
	// what the server listened on.
	Target string `json:"target"`
	// Summary is one line in plain words for listings ("udp send 95.70
	// Mbit/s, 0.00 % loss").
	Summary string `json:"summary"`
	// Config is the full configuration the run was made with (JSON, see
	// RunConfig).
	Config json.RawMessage `json:"config,omitempty"`
	// Host holds facts about the measuring host (JSON, see HostFacts).
	Host json.RawMessage `json:"host,omitempty"`
	// Result is the whole result document, exactly as printed with --json.
	Result json.RawMessage `json:"result,omitempty"`
}

// HostFacts are what is saved about the measuring host.
type HostFacts struct {
	Hostname  string `json:"hostname"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
	// Kernel is the kernel release where the system says (Linux).
	Kernel string `json:"kernel,omitempty"`
}

// RunConfig is the command line a saved run records (Run.Config): the
// command, its arguments, every flag's value and the flags given.
type RunConfig struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Flags   map[string]string `json:"flags"`
	Changed []string          `json:"changed"`
}

// Command decodes the run's Config; ok is false when it does not decode
// (cfg then holds what was read before the fault).
func (r *Run) Command() (cfg RunConfig, ok bool) {
	err := json.Unmarshal(r.Config, &cfg)
	return cfg, err == nil
}

// RunDoc is one saved run as a document (KindRun). The document's own
// kind hides the run's: the result inside says what the run was.
type RunDoc struct {
	Schema string `json:"schema"`
	Kind   string `json:"kind"`
	*Run
}

// History is a listing of saved runs (KindHistory): Store says where they
// are kept.
type History struct {
	Schema string `json:"schema"`
	Kind   string `json:"kind"`
	Store  string `json:"store"`
	Runs   []Run  `json:"runs"`
}
