package cli

import (
	"context"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
)

// dbFlag is --db, shared by the commands that save and those that read.
type dbFlag struct{ db string }

func (d *dbFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&d.db, "db", "", "results store `URL`: an SQLite file (PATH or sqlite:PATH) or postgres://user:pass@host/db (default $"+store.EnvDB+", else results.db in the user data directory; docs/store.md)")
}

// open opens the store the flag (or $WIREBENCH_DB) names.
func (d *dbFlag) open(ctx context.Context) (store.Store, error) {
	ctx, cancel := context.WithTimeout(ctx, store.SaveTimeout)
	defer cancel()
	return store.Open(ctx, store.ResolveURL(d.db))
}

// saveFlags are --no-save, --label and --db of a command whose runs are
// saved. One saveFlags may save many runs (the server, a matrix): its
// store.Saver opens the store at the first save and keeps it.
type saveFlags struct {
	dbFlag
	noSave bool
	labels []string
	keep   int // --keep-runs (server): store.Saver.Keep

	cmd   *cobra.Command
	once  sync.Once
	saver *store.Saver
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

// store returns the flags' saver, made at first use; its warnings go to
// e's stderr.
func (s *saveFlags) store(e *env) *store.Saver {
	s.once.Do(func() {
		s.saver = &store.Saver{URL: s.db, Labels: s.labels, Keep: s.keep,
			Warn: func(w string) { e.logf("warning: %s", w) }}
		if s.cmd != nil {
			s.saver.Config = func() any { return store.CommandConfig(s.cmd.CommandPath(), s.cmd.Flags()) }
		}
	})
	return s.saver
}

// save keeps one run (store.Saver.Save); with --no-save it does nothing.
func (s *saveFlags) save(e *env, kind, target, summary string, started time.Time, doc any) (id int64, warning string) {
	if s.noSave {
		return 0, ""
	}
	return s.store(e).Save(e.ctx, kind, target, summary, started, doc)
}

// close closes the store, if a save opened it.
func (s *saveFlags) close() {
	if s.saver != nil {
		s.saver.Close()
	}
}

// saveTest saves a test result and, when the store failed, adds the
// warning to the result (for JSON and CSV output; text has it on stderr).
func (s *saveFlags) saveTest(e *env, r *result.Result, format outputFormat) (id int64) {
	id, w := s.save(e, result.KindTest, net.JoinHostPort(r.Test.Host, strconv.Itoa(r.Test.Port)), report.TestSummary(r), r.StartedAt, result.Sanitize(r))
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
