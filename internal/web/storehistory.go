package web

import (
	"context"
	"errors"
	"fmt"

	"github.com/wirebench/wirebench/internal/store"
)

// StoreHistory shows a results store (the one the server saves to) as
// the dashboard's history, so its pages list every saved run, not only
// this server's since it started.
type StoreHistory struct {
	// Open returns the store, opened at its first use (store.Saver.Open).
	Open func(ctx context.Context) (store.Store, error)
}

// List lists the store's runs matching f.
func (h StoreHistory) List(ctx context.Context, f Filter) ([]RunSummary, error) {
	st, err := h.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("results store: %w", err)
	}
	runs, err := st.List(ctx, store.Filter{Labels: f.Labels, Limit: f.Limit})
	if err != nil {
		return nil, fmt.Errorf("listing the results store: %w", err)
	}
	out := make([]RunSummary, len(runs))
	for i, r := range runs {
		out[i] = summaryOf(&r)
	}
	return out, nil
}

// Get reads run id from the store.
func (h StoreHistory) Get(ctx context.Context, id int64) (*Run, error) {
	st, err := h.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("results store: %w", err)
	}
	r, err := st.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading run %d from the results store: %w", id, err)
	}
	return &Run{RunSummary: summaryOf(r), Result: r.Result}, nil
}

func summaryOf(r *store.Run) RunSummary {
	return RunSummary{ID: r.ID, Kind: r.Kind, Labels: r.Labels, StartedAt: r.StartedAt, Target: r.Target, Summary: r.Summary}
}
