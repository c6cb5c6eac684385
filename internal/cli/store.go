package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/version"
)

// reopenAfter is how long a store that could not be opened is not tried
// again (a lab database that does not answer would hold every server
// test's output for storeTimeout).
const reopenAfter = 30 * time.Second

// storeTimeout bounds opening the store and saving one run: a lab database
// that does not answer must not hold the measurement's output for long.
const storeTimeout = 10 * time.Second

// dbFlag is --db, shared by the commands that save and those that read.
type dbFlag struct{ db string }

func (d *dbFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&d.db, "db", "", "results store `URL`: an SQLite file (PATH or sqlite:PATH) or postgres://user:pass@host/db (default $"+store.EnvDB+", else results.db in the user data directory; docs/store.md)")
}

// open opens the store the flag (or $WIREBENCH_DB) names.
func (d *dbFlag) open(ctx context.Context) (store.Store, error) {
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	return store.Open(ctx, store.ResolveURL(d.db))
}

// saveFlags are --no-save, --label and --db of a command whose runs are
// saved. One saveFlags may save many runs (the server, a matrix): the
// store is opened at the first save and kept.
type saveFlags struct {
	dbFlag
	noSave bool
	labels []string

	cmd     *cobra.Command
	mu      sync.Mutex
	st      store.Store
	failing bool      // the last save failed and said so on stderr
	openErr error     // why the store could not be opened, until retryAt
	retryAt time.Time // when to try opening it again
}

func (s *saveFlags) register(cmd *cobra.Command) {
	s.cmd = cmd
	fl := cmd.Flags()
	fl.BoolVar(&s.noSave, "no-save", false, "do not save this run in the results store")
	fl.StringArrayVar(&s.labels, "label", nil, "label the saved run with `LABEL`, key=value (repeatable): --label device=pic32 --label link=usb")
	s.dbFlag.register(cmd)
}

// check rejects malformed labels before anything runs.
func (s *saveFlags) check() error {
	if _, err := store.ParseLabels(s.labels); err != nil {
		return usageError{err}
	}
	return nil
}

// save keeps one run: kind and target as the run says, doc its whole result
// document (as printed with --json). It returns the saved run's id, or ""
// and a warning when the store could not be written; the warning has then
// been printed on stderr (once while saves keep failing), and the caller
// adds it to its JSON output. With --no-save it does nothing.
func (s *saveFlags) save(e *env, kind, target, summary string, started time.Time, doc any) (id int64, warning string) {
	if s.noSave {
		return 0, ""
	}
	id, err := s.trySave(e.ctx, kind, target, summary, started, doc)
	if err != nil {
		return 0, s.skip(e, err.Error())
	}
	s.mu.Lock()
	s.failing = false
	s.mu.Unlock()
	return id, ""
}

// skip reports a run not saved, for why: it returns the warning, printed
// on stderr unless the previous save failed too.
func (s *saveFlags) skip(e *env, why string) string {
	// One line, whatever the driver's message looks like.
	warning := fmt.Sprintf("this run was not saved in the results store: %s (the figures above are unaffected; --no-save skips saving)",
		strings.Join(strings.Fields(why), " "))
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.failing {
		e.logf("warning: %s", warning)
	}
	s.failing = true
	return warning
}

func (s *saveFlags) trySave(ctx context.Context, kind, target, summary string, started time.Time, doc any) (int64, error) {
	labels, err := store.ParseLabels(s.labels)
	if err != nil {
		return 0, err
	}
	if r, ok := doc.(*result.Result); ok {
		// A test also carries the labels it has by itself (protocol,
		// direction, dialect, peer, role), so that history and the
		// dashboard can filter on them; a --label of the same key wins.
		for k, v := range r.Labels() {
			if _, set := labels[k]; !set {
				if labels == nil {
					labels = map[string]string{}
				}
				labels[k] = v
			}
		}
	}
	res, err := json.Marshal(doc)
	if err != nil {
		return 0, fmt.Errorf("encoding the result: %w", err)
	}
	cfg, err := json.Marshal(commandConfig(s.cmd))
	if err != nil {
		return 0, fmt.Errorf("encoding the configuration: %w", err)
	}
	host, err := json.Marshal(store.Host())
	if err != nil {
		return 0, err
	}
	// Saving goes on after an interrupt: the measurement it keeps is done.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	st, err := s.open(ctx)
	if err != nil {
		return 0, err
	}
	return st.Save(ctx, &store.Run{Kind: kind, Labels: labels, StartedAt: started, Version: version.String(),
		Target: target, Summary: summary, Config: cfg, Host: host, Result: res})
}

// open returns the store, opening it on first use; after a failure it
// returns that error without retrying for reopenAfter.
func (s *saveFlags) open(ctx context.Context) (store.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st == nil {
		if s.openErr != nil && time.Now().Before(s.retryAt) {
			return nil, s.openErr
		}
		st, err := store.Open(ctx, store.ResolveURL(s.db))
		if err != nil {
			s.openErr, s.retryAt = err, time.Now().Add(reopenAfter)
			return nil, err
		}
		s.st, s.openErr = st, nil
	}
	return s.st, nil
}

// close closes the store, if a save opened it.
func (s *saveFlags) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st != nil {
		_ = s.st.Close()
		s.st = nil
	}
}

// saveTest saves a test result and, when the store failed, adds the
// warning to the result (for JSON and CSV output; text has it on stderr).
func (s *saveFlags) saveTest(e *env, r *result.Result, format outputFormat) (id int64) {
	id, w := s.save(e, result.KindTest, net.JoinHostPort(r.Test.Host, strconv.Itoa(r.Test.Port)), testSummary(r), r.StartedAt, result.Sanitize(r))
	if w != "" && format != formatText {
		r.Warn(w)
	}
	return id
}

// announce says which run the store saved a command's result as, so that
// `show`, `report` and `compare` can name it: "saved as run N" on stderr,
// after the output (deferred by the caller). A JSON document is left
// alone (stdout carries one document only); nothing is said when the run
// was not saved.
func (s *saveFlags) announce(e *env, id int64, format outputFormat) {
	if id > 0 && format != formatJSON {
		e.logf("saved as run %d", id)
	}
}

// secretFlags are flags whose values are never saved.
var secretFlags = map[string]bool{"auth-secret": true, "password": true}

// commandConfig is the saved configuration of a run: the command, its
// arguments and every flag with its value (defaults included), secrets
// and database passwords left out.
func commandConfig(cmd *cobra.Command) map[string]any {
	flags := map[string]string{}
	var changed []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		v := f.Value.String()
		switch {
		case secretFlags[f.Name] && v != "":
			v = "(not saved)"
		case f.Name == "db":
			v = redactURL(v)
		}
		flags[f.Name] = v
		if f.Changed {
			changed = append(changed, f.Name)
		}
	})
	return map[string]any{"command": cmd.CommandPath(), "args": cmd.Flags().Args(), "flags": flags, "changed": changed}
}

// redactURL drops the password from a database URL.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}

// testSummary is a test's line in `history`.
func testSummary(r *result.Result) string {
	var b strings.Builder
	b.WriteString(r.Test.Protocol + " " + r.Test.Direction)
	switch {
	case r.Receiver != nil:
		fmt.Fprintf(&b, " %s", units.FormatBits(r.Receiver.BitsPerSecond))
		if r.Test.Protocol == result.UDP {
			total := r.Receiver.Total
			if total == 0 {
				total = r.Receiver.Packets + r.Receiver.Lost
			}
			if total > 0 {
				fmt.Fprintf(&b, ", %.2f %% loss", 100*float64(r.Receiver.Lost)/float64(total))
			}
			fmt.Fprintf(&b, ", %.3f ms jitter", r.Receiver.JitterMS)
		}
	case r.Sender != nil:
		fmt.Fprintf(&b, " %s sent", units.FormatBits(r.Sender.BitsPerSecond))
	}
	if r.Error != "" {
		b.WriteString(" (ended early)")
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, " [%d warning(s)]", len(r.Warnings))
	}
	return b.String()
}
