package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/wirebench/wirebench/internal/store"
	"github.com/wirebench/wirebench/internal/web"
)

// storeHistory shows the results store (the one the server saves to) as
// the dashboard's history, so its pages list every saved run, not only
// this server's since it started.
type storeHistory struct{ s *saveFlags }

func (h storeHistory) List(ctx context.Context, f web.Filter) ([]web.RunSummary, error) {
	st, err := h.s.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("results store: %w", err)
	}
	runs, err := st.List(ctx, store.Filter{Labels: f.Labels, Limit: f.Limit})
	if err != nil {
		return nil, fmt.Errorf("listing the results store: %w", err)
	}
	out := make([]web.RunSummary, len(runs))
	for i, r := range runs {
		out[i] = summaryOf(&r)
	}
	return out, nil
}

func (h storeHistory) Get(ctx context.Context, id int64) (*web.Run, error) {
	st, err := h.s.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("results store: %w", err)
	}
	r, err := st.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("run %d: %w", id, web.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading run %d from the results store: %w", id, err)
	}
	return &web.Run{RunSummary: summaryOf(r), Result: r.Result}, nil
}

func summaryOf(r *store.Run) web.RunSummary {
	return web.RunSummary{ID: r.ID, Kind: r.Kind, Labels: r.Labels, StartedAt: r.StartedAt, Target: r.Target, Summary: r.Summary}
}
