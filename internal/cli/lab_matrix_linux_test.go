//go:build linux

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"

	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/store"
)

// labPrintedServer returns the `lab exec … b -- wirebench server` line
// `lab up` printed, as arguments for run: "wirebench" before the command
// is dropped (run is wirebench) and the one after it becomes this test
// binary (wirebenchArgv), extra appended to the server's own arguments.
func labPrintedServer(t *testing.T, upOut string, extra ...string) []string {
	t.Helper()
	for _, l := range strings.Split(upOut, "\n") {
		l = strings.TrimSpace(l)
		f := strings.Fields(l)
		if len(f) < 4 || f[0] != "wirebench" || f[1] != "lab" || f[2] != "exec" || f[len(f)-1] != "server" {
			continue
		}
		sep := strings.Index(l, " -- wirebench ")
		if sep < 0 {
			t.Fatalf("the printed server line has no \"-- wirebench\": %q", l)
		}
		lab := strings.Fields(l[len("wirebench "):sep])
		cmd := strings.Fields(l[sep+len(" -- wirebench "):])
		return append(append(lab, "--"), wirebenchArgv(append(cmd, extra...)...)...)
	}
	t.Fatalf("lab up printed no `lab exec … b -- wirebench server` line:\n%s", upOut)
	return nil
}

// TestLabMatrixAsPrinted is issue 20's last "Must show": in `lab up
// --medium eth100`, with the server started by `lab exec b -- wirebench
// server` exactly as `lab up` prints it, `matrix 198.18.0.2 -b 100M
// --medium eth100` from a gives 4 cells ok (198.18.0.0/15 is on the
// server's default reverse-traffic networks); against a second server
// whose policy refuses reverse traffic to a (--deny-reverse 198.18.0.1),
// the download cells the policy covers fail naming the refusal: iperf3's
// in the server's own words, iperf 2's (which cannot carry it) naming the
// policy and --allow-reverse; the TCP -R download, on the client's own
// connection, is served. The legacy dialect's -r covers both downloads.
func TestLabMatrixAsPrinted(t *testing.T) {
	const name = "t_labmx"
	needLab(t, name)
	t.Setenv(store.EnvDB, filepath.Join(t.TempDir(), "results.db"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	up, _ := runLab(t, "lab", "up", "--name", name, "--medium", "eth100")
	t.Logf("lab up:\n%s", up)
	srv := labPrintedServer(t, up)
	t.Logf("server as printed: %q", srv)
	startInLabArgs(ctx, t, srv, "listening")
	// The second server, refusing reverse traffic to a.
	startInLabArgs(ctx, t, labPrintedServer(t, up, "-p", "5002", "--iperf3-port", "5202", "--deny-reverse", "198.18.0.1"), "listening")

	// The matrix as the issue gives it (-t 3 only to keep the test short).
	mx := func(args ...string) []string {
		return append([]string{"lab", "exec", "--name", name, "a", "--"}, wirebenchArgv(append([]string{"matrix", "198.18.0.2"}, args...)...)...)
	}
	start := time.Now()
	out, _ := runLab(t, mx("-b", "100M", "--medium", "eth100", "-t", "3")...)
	t.Logf("matrix as printed (%.1f s):\n%s", time.Since(start).Seconds(), out)
	ok := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && (f[0] == "TCP" || f[0] == "UDP") && f[len(f)-1] == "ok" {
			ok++
		}
	}
	if ok != 4 {
		t.Errorf("%d cells ok, want 4", ok)
	}

	for _, c := range []struct {
		dialect string
		refused map[string]string // protocol of each refused download → what its reason must say
	}{
		{"iperf2", map[string]string{"udp": "reverse-traffic policy"}},
		{"iperf3", map[string]string{"udp": "198.18.0.1 is in this server's --deny-reverse"}},
		{"iperf2-legacy", map[string]string{"udp": "reverse-traffic policy", "tcp": "reverse-traffic policy"}},
	} {
		var o, e bytes.Buffer
		start := time.Now()
		code := run(ctx, mx("-p", "5002", "--dialect", c.dialect, "-b", "10M", "-t", "1", "--json"), &o, &e)
		t.Logf("matrix --dialect %s against --deny-reverse 198.18.0.1: exit %d in %.1f s", c.dialect, code, time.Since(start).Seconds())
		var m result.Matrix
		if err := json.Unmarshal(o.Bytes(), &m); err != nil {
			t.Fatalf("matrix --json: %v\n%s\n%s", err, o.String(), e.String())
		}
		if code != exitFailure {
			t.Errorf("%s: exit %d with refused cells, want %d", c.dialect, code, exitFailure)
		}
		for _, cell := range m.Cells {
			t.Logf("  %s %s %s: %s %s", c.dialect, cell.Protocol, cell.Direction, cell.Status, cell.Reason)
			want, refused := c.refused[cell.Protocol]
			switch {
			case cell.Direction == result.MatrixDownload && refused:
				if cell.Status != matrix.StatusFailed || !strings.Contains(cell.Reason, want) {
					t.Errorf("%s %s download: %s %q, want failed naming the refusal (%q)", c.dialect, cell.Protocol, cell.Status, cell.Reason, want)
				}
				if strings.Contains(cell.Reason, "fell behind its pacing") || strings.Contains(cell.Reason, "use --dialect iperf3") && !strings.Contains(cell.Reason, want) {
					t.Errorf("%s %s download blames something else: %q", c.dialect, cell.Protocol, cell.Reason)
				}
			case cell.Status != matrix.StatusOK:
				t.Errorf("%s %s %s: %s %q, want ok", c.dialect, cell.Protocol, cell.Direction, cell.Status, cell.Reason)
			}
		}
	}
}

// startInLabArgs runs `wirebench args…` (a `lab exec`) in process in the
// background and waits for ready in its output.
func startInLabArgs(ctx context.Context, t *testing.T, args []string, ready string) chan int {
	t.Helper()
	_, _, done := startServerCmd(ctx, t, args, ready)
	return done
}
