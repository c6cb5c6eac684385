package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/version"
)

// ReopenAfter is how long a Saver whose store could not be opened does not
// try again (a lab database that does not answer would hold every server
// test's output for SaveTimeout).
const ReopenAfter = 30 * time.Second

// SaveTimeout bounds opening the store and saving one run: a lab database
// that does not answer must not hold the measurement's output for long.
const SaveTimeout = 10 * time.Second

// Saver saves the runs of one command. It may save many (the server, a
// matrix): the store is opened at the first save and kept until Close.
type Saver struct {
	// URL names the store as the user gave it (ResolveURL applies).
	URL string
	// Labels are the user's labels, key=value, checked with ParseLabels.
	Labels []string
	// Config returns the command's configuration, saved with each run.
	Config func() any
	// Warn says that a run was not saved and why (once while saves keep
	// failing); nil says nothing.
	Warn func(warning string)
	// Keep, when positive, keeps the store to the newest Keep runs (a
	// server's --keep-runs): every PruneEvery saves, and at the first,
	// the older runs are deleted, so the store holds at most Keep +
	// PruneEvery - 1 runs.
	Keep   int
	saves  int
	pruned int64 // runs deleted so far

	mu      sync.Mutex
	st      Store
	failing bool      // the last save failed and said so
	openErr error     // why the store could not be opened, until retryAt
	retryAt time.Time // when to try opening it again
}

// Save keeps one run: kind and target as the run says, doc its whole
// result document (as printed with --json). It returns the saved run's id,
// or 0 and a warning when the store could not be written; the warning has
// then been passed to Warn (once while saves keep failing), and the caller
// adds it to its JSON output. Saving goes on after ctx is cancelled (the
// measurement it keeps is done), for at most SaveTimeout.
func (s *Saver) Save(ctx context.Context, kind, target, summary string, started time.Time, doc any) (id int64, warning string) {
	id, err := s.trySave(ctx, kind, target, summary, started, doc)
	if err != nil {
		return 0, s.skip(err.Error())
	}
	s.mu.Lock()
	s.failing = false
	prune := s.Keep > 0 && s.saves%PruneEvery == 0
	s.saves++
	s.mu.Unlock()
	if prune {
		s.prune(ctx)
	}
	return id, ""
}

// PruneEvery is how many saves a Saver with Keep makes between prunes.
const PruneEvery = 100

// prune deletes the runs beyond the newest Keep; a failure is said (it
// loses nothing) and tried again PruneEvery saves later.
func (s *Saver) prune(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SaveTimeout)
	defer cancel()
	st, err := s.Open(ctx)
	if err == nil {
		var n int64
		n, err = st.Prune(ctx, Prune{Keep: s.Keep})
		s.mu.Lock()
		s.pruned += n
		s.mu.Unlock()
	}
	if err != nil && s.Warn != nil {
		s.Warn(fmt.Sprintf("could not keep the results store to %d runs: %v", s.Keep, err))
	}
}

// Pruned is how many runs Keep deleted so far.
func (s *Saver) Pruned() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pruned
}

// skip reports a run not saved, for why: it returns the warning, passed to
// Warn unless the previous save failed too.
func (s *Saver) skip(why string) string {
	// One line, whatever the driver's message looks like.
	warning := fmt.Sprintf("this run was not saved in the results store: %s (the figures above are unaffected; --no-save skips saving)",
		strings.Join(strings.Fields(why), " "))
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.failing && s.Warn != nil {
		s.Warn(warning)
	}
	s.failing = true
	return warning
}

func (s *Saver) trySave(ctx context.Context, kind, target, summary string, started time.Time, doc any) (int64, error) {
	labels, err := ParseLabels(s.Labels)
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
	var config any
	if s.Config != nil {
		config = s.Config()
	}
	cfg, err := json.Marshal(config)
	if err != nil {
		return 0, fmt.Errorf("encoding the configuration: %w", err)
	}
	host, err := json.Marshal(Host())
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SaveTimeout)
	defer cancel()
	st, err := s.Open(ctx)
	if err != nil {
		return 0, err
	}
	return st.Save(ctx, &Run{Kind: kind, Labels: labels, StartedAt: started, Version: version.String(),
		Target: target, Summary: summary, Config: cfg, Host: host, Result: res})
}

// Open returns the store, opening it on first use; after a failure it
// returns that error without retrying for ReopenAfter.
func (s *Saver) Open(ctx context.Context) (Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st == nil {
		if s.openErr != nil && time.Now().Before(s.retryAt) {
			return nil, s.openErr
		}
		st, err := Open(ctx, ResolveURL(s.URL))
		if err != nil {
			s.openErr, s.retryAt = err, time.Now().Add(ReopenAfter)
			return nil, err
		}
		s.st, s.openErr = st, nil
	}
	return s.st, nil
}

// Close closes the store, if Save or Open opened it.
func (s *Saver) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st != nil {
		_ = s.st.Close()
		s.st = nil
	}
}
