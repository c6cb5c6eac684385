package cli

import (
	"fmt"
	"os"
	"testing"

	"github.com/wirebench/wirebench/internal/store"
)

// testDataEnv carries the tests' data directory to the helper processes
// they start (this test binary again), which use it rather than make one
// of their own: many of them end in os.Exit, past any cleanup.
const testDataEnv = "WIREBENCH_TEST_DATA_HOME"

// TestMain points the results store at a temporary directory: the runs the
// tests make, and those of the helper processes they start, never reach
// the user's real data directory.
func TestMain(m *testing.M) {
	if dir := os.Getenv(testDataEnv); dir != "" {
		os.Setenv("XDG_DATA_HOME", dir)
		os.Unsetenv(store.EnvDB)
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "wirebench-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Helpers run as user nobody may save too.
	_ = os.Chmod(dir, os.ModePerm|os.ModeSticky)
	os.Setenv("XDG_DATA_HOME", dir)
	os.Setenv(testDataEnv, dir)
	os.Unsetenv(store.EnvDB)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
