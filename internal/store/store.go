// Package store keeps wirebench's results: every run (a client or server
// test, a ping, a latency run, later matrix and sweep runs) with its labels,
// its configuration, the software version, facts about the host and the
// whole JSON result including the raw intervals. One interface, Store, has
// two implementations that pass one shared test suite: an embedded SQLite
// file (pure Go, the default, in the user's data directory) and a
// PostgreSQL database for a shared lab. Both are created and upgraded by
// the same versioned migrations (one directory per SQL dialect).
//
// The store measures nothing and renders nothing: it saves and finds runs.
package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// EnvDB is the environment variable naming the database when --db is not
// given.
const EnvDB = "WIREBENCH_DB"

// Run kinds. A run's kind is the "kind" of its result document.
const (
	KindTest    = "test"
	KindPing    = "ping"
	KindLatency = "request-response"
	KindMatrix  = "matrix"
	KindSweep   = "sweep"
	KindRFC2544 = "rfc2544"
)

// Run is one saved run (result.Run, the record the store keeps).
type Run = result.Run

// Filter selects runs. The zero Filter selects every run.
type Filter struct {
	// Labels a run must all carry with these values.
	Labels map[string]string
	// Since excludes runs that started before it; zero: no limit.
	Since time.Time
	// Kind, when set, is the only kind selected.
	Kind string
	// Limit caps the number of runs returned (the newest); 0: no cap.
	Limit int
}

// ErrNotFound is returned by Get and Latest when no run matches.
var ErrNotFound = errors.New("no such run")

// Store saves and finds runs. Implementations are safe for concurrent use.
type Store interface {
	// Save stores run (its ID is ignored) and returns the new run's id.
	// When Save returns, the run is durable: a crash of this process
	// afterwards does not lose it.
	Save(ctx context.Context, run *Run) (int64, error)
	// List returns the runs matching f, oldest first, without their
	// Config, Host and Result documents (Get has them).
	List(ctx context.Context, f Filter) ([]Run, error)
	// Get returns one run in full, or ErrNotFound.
	Get(ctx context.Context, id int64) (*Run, error)
	// Latest returns the newest run matching f in full, or ErrNotFound.
	Latest(ctx context.Context, f Filter) (*Run, error)
	// Prune deletes the runs p names, with their labels, and says how
	// many it deleted.
	Prune(ctx context.Context, p Prune) (int64, error)
	// Location says where the store is, for messages (a file path, or the
	// database URL without its password).
	Location() string
	// Close releases the database.
	Close() error
}

// Open opens (creating and migrating as needed) the store named by url:
// "postgres://…" or "postgresql://…" is a PostgreSQL database, "sqlite:PATH"
// or a plain PATH an SQLite file, and "" the default SQLite file
// (DefaultPath).
func Open(ctx context.Context, url string) (Store, error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return openPostgres(ctx, url)
	case url == "":
		p, err := DefaultPath()
		if err != nil {
			return nil, err
		}
		return openSQLite(ctx, p)
	default:
		return openSQLite(ctx, strings.TrimPrefix(url, "sqlite:"))
	}
}

// ResolveURL is the database a command uses: flag when set, else
// $WIREBENCH_DB, else "" (the default SQLite file).
func ResolveURL(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(EnvDB)
}

// Save opens the store at url, saves run and closes the store: the one
// call a command needs to keep its result. It returns the new run's id.
func Save(ctx context.Context, url string, run *Run) (int64, error) {
	s, err := Open(ctx, url)
	if err != nil {
		return 0, err
	}
	id, err := s.Save(ctx, run)
	if cerr := s.Close(); err == nil && cerr != nil {
		return 0, fmt.Errorf("closing the results store: %w", cerr)
	}
	return id, err
}

// DefaultPath is the default SQLite file: results.db in a wirebench
// directory under $XDG_DATA_HOME when it is set (on every system), else
// under the system's user data directory: ~/.local/share on Linux and
// other Unix systems, ~/Library/Application Support on macOS,
// %LocalAppData% on Windows.
func DefaultPath() (string, error) {
	dir, err := dataDir()
	if err != nil {
		return "", fmt.Errorf("finding the user data directory for the results store (set --db or %s): %w", EnvDB, err)
	}
	return filepath.Join(dir, "wirebench", "results.db"), nil
}

func dataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return d, nil
	}
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return d, nil
		}
		return "", errors.New("%LocalAppData% is not set")
	case "darwin", "ios":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "Application Support"), nil
	case "plan9":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "lib"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share"), nil
}

// ParseLabel parses one "key=value" label. Keys are non-empty and hold no
// '=' or ','; values may be empty.
func ParseLabel(s string) (key, value string, err error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return "", "", fmt.Errorf("invalid label %q: want key=value", s)
	}
	if strings.ContainsAny(k, ",") {
		return "", "", fmt.Errorf("invalid label %q: a key holds no ','", s)
	}
	return k, v, nil
}

// ParseLabels parses "key=value" labels into a map; a key given twice is
// an error.
func ParseLabels(list []string) (map[string]string, error) {
	m := map[string]string{}
	for _, s := range list {
		k, v, err := ParseLabel(s)
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("label %q given twice", k)
		}
		m[k] = v
	}
	return m, nil
}

// Selector names runs on the command line: a run id ("42"), or labels
// ("device=pic32,link=usb"), optionally with "kind=…", meaning the newest
// run carrying them all.
type Selector struct {
	ID     int64  // > 0: this run
	Filter Filter // else the newest run matching this
	Text   string // as typed
}

// ParseSelector parses a run id or a comma-separated label list.
func ParseSelector(s string) (Selector, error) {
	sel := Selector{Text: s}
	if id, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64); err == nil {
		if id <= 0 {
			return sel, fmt.Errorf("invalid run id %q: ids start at 1", s)
		}
		sel.ID = id
		return sel, nil
	}
	labels, err := ParseLabels(strings.Split(s, ","))
	if err != nil {
		return sel, fmt.Errorf("invalid run %q: want a run id or labels like device=pic32,link=usb: %w", s, err)
	}
	if k, ok := labels["kind"]; ok {
		sel.Filter.Kind = k
		delete(labels, "kind")
	}
	sel.Filter.Labels = labels
	return sel, nil
}

// Find returns the run a selector names, in full.
func Find(ctx context.Context, s Store, sel Selector) (*Run, error) {
	var r *Run
	var err error
	if sel.ID > 0 {
		r, err = s.Get(ctx, sel.ID)
	} else {
		r, err = s.Latest(ctx, sel.Filter)
	}
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("run %q: %w in %s", sel.Text, ErrNotFound, s.Location())
	}
	return r, err
}

// Ambiguous says whether sel names its run by labels that more runs than
// the newest carry (an id names one run); a store that cannot tell says
// no.
func Ambiguous(ctx context.Context, s Store, sel Selector) bool {
	if sel.ID != 0 {
		return false
	}
	f := sel.Filter
	f.Limit = 2
	more, err := s.List(ctx, f)
	return err == nil && len(more) > 1
}

// HostFacts are what is saved about the measuring host.
type HostFacts = result.HostFacts

// Host returns this host's facts.
func Host() HostFacts {
	h := HostFacts{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	h.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	return h
}
