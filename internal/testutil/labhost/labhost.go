// Package labhost builds a namespace lab (internal/netlab) for one test:
// the skips when this host cannot (not root, no namespaces, -short), the
// removal of labs a killed earlier run left behind, and the lab's own
// removal when the test ends.
package labhost

import (
	"context"
	"os"
	"testing"

	"github.com/wirebench/wirebench/internal/netlab"
)

// New builds the lab cfg describes for t, or skips t with the reason this
// host cannot; the lab is removed when t ends (a failure to remove it
// fails t). what says what the test does, for the -short skip.
func New(t testing.TB, ctx context.Context, cfg netlab.Config, what string) *netlab.Lab {
	t.Helper()
	Require(t, what)
	if removed, err := netlab.CleanupStale(); err != nil {
		t.Logf("cleaning stale namespaces: %v", err)
	} else if len(removed) > 0 {
		t.Logf("removed stale namespaces: %v", removed)
	}
	lab, err := netlab.New(ctx, cfg)
	if err != nil {
		t.Fatalf("building the lab: %v", err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Errorf("removing the lab: %v", err)
		}
	})
	return lab
}

// Require skips t unless this host can build namespace labs: with -short
// (what says why the test is long), when not root, or without namespaces.
func Require(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s; skipped with -short", what)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces (netlab); run as root, as CI does")
	}
	if err := netlab.Available(); err != nil {
		t.Skipf("network namespaces unavailable here: %v", err)
	}
}
