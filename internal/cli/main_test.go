package cli

import (
	"fmt"
	"os"
	"testing"

	"github.com/wirebench/wirebench/internal/store"
)

// TestMain points the results store at a temporary directory: the runs the
// tests make (and those of the helper processes they start, which inherit
// the environment) never reach the user's real data directory.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wirebench-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Helpers run as user nobody may save too.
	_ = os.Chmod(dir, 0o1777)
	os.Setenv("XDG_DATA_HOME", dir)
	os.Unsetenv(store.EnvDB)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
