// Package repotest checks the repository's scripts and documents from Go's test runner:
// what the scripts do when asked for help, and facts the documents state.
package repotest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScriptsTestHelp checks that scripts/test -h and --help print its usage
// and exit 0 having run nothing: every command it would run on its way to
// the tests (go, id, apt-get, the PostgreSQL setup's tools) is a stand-in
// on PATH that leaves a mark, and no mark may be left. An unknown argument
// exits 2, also having run nothing.
func TestScriptsTestHelp(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: scripts/test needs it")
	}
	root := repoRoot(t)
	for _, tc := range []struct {
		arg      string
		code     int
		out, err string
	}{
		{"--help", 0, "usage: scripts/test", ""},
		{"-h", 0, "usage: scripts/test", ""},
		{"--bogus", 2, "", "unknown argument --bogus"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			bin, mark := standIns(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bash, filepath.Join(root, "scripts", "test"), tc.arg)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "PATH="+bin)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("running scripts/test %s: %v", tc.arg, err)
			}
			if code != tc.code {
				t.Errorf("scripts/test %s exited %d, want %d; stderr: %s", tc.arg, code, tc.code, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tc.out) {
				t.Errorf("scripts/test %s stdout starts %q, want %q", tc.arg, first(stdout.String()), tc.out)
			}
			if !strings.Contains(stderr.String(), tc.err) {
				t.Errorf("scripts/test %s stderr %q, want it to contain %q", tc.arg, stderr.String(), tc.err)
			}
			if ran, err := os.ReadFile(mark); err == nil {
				t.Errorf("scripts/test %s ran commands it must not: %s", tc.arg, ran)
			}
		})
	}
}

// standIns makes a directory for PATH holding the few tools the script's
// argument handling needs (cat, dirname) and stand-ins for everything else
// it runs, which append their name to the returned mark file and fail.
func standIns(t *testing.T) (dir, mark string) {
	t.Helper()
	dir = t.TempDir()
	mark = filepath.Join(t.TempDir(), "ran")
	for _, tool := range []string{"cat", "dirname"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s is not installed: scripts/test needs it", tool)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	stub := "#!/bin/sh\necho \"${0##*/} $*\" >>" + mark + "\nexit 1\n"
	for _, tool := range []string{"go", "id", "apt-get", "pg_ctlcluster", "psql", "su", "sort", "mktemp", "grep", "sed"} {
		if err := os.WriteFile(filepath.Join(dir, tool), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, mark
}

// repoRoot is the directory holding go.mod, above this package's.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}

// first is the first line of s.
func first(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
