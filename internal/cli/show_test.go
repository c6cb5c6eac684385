package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/compare"
	"github.com/wirebench/wirebench/internal/store"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// showBody is what `show` printed after the run's record (the first blank
// line): the result in its command's layout.
func showBody(t *testing.T, out string) string {
	t.Helper()
	_, body, ok := strings.Cut(out, "\n\n")
	if !ok {
		t.Fatalf("show printed no record header:\n%s", out)
	}
	return body
}

// fromTable is a test's text from its interval table on: the header
// before it says where the client connected, which show cannot know.
func fromTable(t *testing.T, s string) string {
	t.Helper()
	i := strings.Index(s, "[ ID] Interval")
	if i < 0 {
		t.Fatalf("no interval table in:\n%s", s)
	}
	return s[i:]
}

// runAndShow runs a command that saves into db, then `show` of the run it
// saved (the last one); it returns the command's stdout and show's body.
func runAndShow(t *testing.T, db string, args ...string) (printed, shown string) {
	t.Helper()
	code, out, errOut := cliRun(append(args, "--db", db)...)
	if code != exitOK {
		t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	_, id, ok := strings.Cut(strings.TrimSpace(errOut), "saved as run ")
	if !ok {
		t.Fatalf("%s did not say which run it saved: %q", args[0], errOut)
	}
	code, sh, errOut := cliRun("show", id, "--db", db)
	if code != exitOK {
		t.Fatalf("show %s: exit %d: %s", id, code, errOut)
	}
	return out, showBody(t, sh)
}

// TestShowReprintsEachKind: `show RUN` prints a saved run in the layout
// of the command that made it, from the same renderer: what follows the
// record is what the command printed (a test from its interval table on,
// since its first lines name the connection). Every test runs with -i:
// the interval rows kept are the ones printed, the last one too.
func TestShowReprintsEachKind(t *testing.T) {
	port := startEchoServer(t)
	db := filepath.Join(t.TempDir(), "results.db")

	printed, shown := runAndShow(t, db, "client", "127.0.0.1", "-p", port, "-u", "-b", "2M", "-t", "0.4", "-i", "0.1", "-f", "k")
	if fromTable(t, shown) != fromTable(t, printed) {
		t.Errorf("UDP test: show differs from the client's output\nclient:\n%s\nshow:\n%s", printed, shown)
	}
	if !strings.Contains(shown, "Kbits/sec") {
		t.Errorf("show of a -f k test is not in Kbits/sec:\n%s", shown)
	}
	printed, shown = runAndShow(t, db, "client", "127.0.0.1", "-p", port, "-u", "-b", "1M", "-P", "2", "-t", "0.4", "-i", "0.2")
	if fromTable(t, shown) != fromTable(t, printed) || !strings.Contains(shown, "SUM") {
		t.Errorf("UDP -P 2 test: show differs from the client's output\nclient:\n%s\nshow:\n%s", printed, shown)
	}
	printed, shown = runAndShow(t, db, "client", "127.0.0.1", "-p", port, "-t", "0.3", "-i", "0.1", "-e")
	if fromTable(t, shown) != fromTable(t, printed) {
		t.Errorf("TCP -e test: show differs from the client's output\nclient:\n%s\nshow:\n%s", printed, shown)
	}
	printed, shown = runAndShow(t, db, "client", "127.0.0.1", "-p", port, "-t", "0.3", "-i", "0.1", "-P", "2", "-R")
	if fromTable(t, shown) != fromTable(t, printed) {
		t.Errorf("TCP -R -P 2 test: show differs from the client's output\nclient:\n%s\nshow:\n%s", printed, shown)
	}
	printed, shown = runAndShow(t, db, "client", "127.0.0.1", "-p", port, "-t", "0.4", "-i", "0.1", "--latency", "--latency-idle", "0.1")
	if fromTable(t, shown) != fromTable(t, printed) || !strings.Contains(shown, "loaded") {
		t.Errorf("client --latency: show differs from the client's output\nclient:\n%s\nshow:\n%s", printed, shown)
	}
	printed, shown = runAndShow(t, db, "latency", "127.0.0.1", "-p", port, "-c", "5", "-i", "0")
	if shown != printed || !strings.Contains(shown, "rtt") {
		t.Errorf("latency: show differs from its output\nlatency:\n%s\nshow:\n%s", printed, shown)
	}
	printed, shown = runAndShow(t, db, "matrix", "127.0.0.1", "-p", port, "-t", "0.3", "--proto", "udp", "-b", "5M", "--medium", "eth1g")
	if shown != printed || !strings.Contains(shown, "UDP (Mbit/s)") {
		t.Errorf("matrix: show differs from its output\nmatrix:\n%s\nshow:\n%s", printed, shown)
	}
	refl := plainReflector(t)
	printed, shown = runAndShow(t, db, "sweep", "127.0.0.1", "-p", refl, "--mode", "reflect", "--max-rate", "500pps",
		"--trial", "200ms", "--gap", "20ms", "--sizes", "64")
	if shown != printed || !strings.Contains(shown, "64") {
		t.Errorf("sweep: show differs from its output\nsweep:\n%s\nshow:\n%s", printed, shown)
	}
}

// TestShowPing: a ping run shows as ping's summary table (when this host
// may ping loopback at all).
func TestShowPing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	code, out, errOut := cliRun("ping", "127.0.0.1", "-c", "3", "-i", "10ms", "-q", "--sizes", "56,200", "--db", db)
	if code != exitOK {
		t.Skipf("ping on loopback is not possible here (exit %d): %s", code, errOut)
	}
	code, sh, errOut := cliRun("show", "kind=ping", "--db", db)
	if code != exitOK {
		t.Fatalf("show: exit %d: %s", code, errOut)
	}
	body := showBody(t, sh)
	if !strings.HasSuffix(out, body) || !strings.Contains(body, "ping statistics") || !strings.Contains(body, "min/avg/max/mdev") {
		t.Errorf("ping: show is not the end of ping's output\nping:\n%s\nshow:\n%s", out, body)
	}
}

// TestShowUnknownKind: a kind show has no layout for, or a document that
// does not decode, is said to be so and printed as JSON; --json prints the
// record as before.
func TestShowUnknownKind(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	id, err := store.Save(context.Background(), db, &store.Run{Kind: "future-kind", Result: json.RawMessage(`{"kind":"future-kind","x":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cliRun("show", strconv.FormatInt(id, 10), "--db", db)
	if code != exitOK || !strings.Contains(out, `no text layout for a run of kind "future-kind"`) || !strings.Contains(out, `"x": 1`) {
		t.Errorf("unknown kind: exit %d\n%s%s", code, out, errOut)
	}
	bad, err := store.Save(context.Background(), db, &store.Run{Kind: "matrix", Result: json.RawMessage(`{"kind":"matrix","cells":"not a list"}`)})
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ = cliRun("show", strconv.FormatInt(bad, 10), "--db", db)
	if code != exitOK || !strings.Contains(out, "the saved matrix document does not decode") || !strings.Contains(out, `"cells": "not a list"`) {
		t.Errorf("undecodable matrix: exit %d\n%s", code, out)
	}
	code, out, _ = cliRun("show", strconv.FormatInt(id, 10), "--db", db, "--json")
	var rec struct{ Kind, Result json.RawMessage }
	if code != exitOK || json.Unmarshal([]byte(out), &rec) != nil || string(rec.Kind) != `"run"` {
		t.Errorf("show --json: exit %d\n%s", code, out)
	}
}

// TestCompareNamesRuns: compare names runs by the labels that tell them
// apart (or the labels they were selected by), by id when they have none,
// in text and JSON.
func TestCompareNamesRuns(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	plainA := saveDoc(t, db, udpTestDoc(100, []float64{100, 100}))
	plainB := saveDoc(t, db, udpTestDoc(90, []float64{90, 90}))
	eth := saveDoc(t, db, udpTestDoc(100, []float64{100, 100}), "device=pic32", "link=eth")
	usb := saveDoc(t, db, udpTestDoc(88.4, []float64{88.4, 88.4}), "device=pic32", "link=usb")
	id := func(n int64) string { return strconv.FormatInt(n, 10) }

	code, out, errOut := cliRun("compare", id(plainA), id(plainB), "--db", db)
	if want := "run " + id(plainB) + " is 90.0 % of run " + id(plainA) + " in throughput\n"; code != exitOK || !strings.Contains(out, want) {
		t.Errorf("unlabelled runs: exit %d, want %q:\n%s%s", code, want, out, errOut)
	}
	// By id: the shared device=pic32 does not tell them apart.
	code, out, _ = cliRun("compare", id(eth), id(usb), "--db", db)
	if want := "link=usb is 88.4 % of link=eth in throughput (run " + id(usb) + " vs run " + id(eth) + ")"; code != exitOK || !strings.Contains(out, want) {
		t.Errorf("labelled runs by id: exit %d, want %q:\n%s", code, want, out)
	}
	// By selector: the labels typed name the run.
	code, out, _ = cliRun("compare", "device=pic32,link=eth", id(plainB), "--db", db, "--json")
	var doc compare.Doc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitOK {
		t.Fatalf("compare --json: exit %d, %v\n%s", code, err, out)
	}
	if doc.Baseline.Name != "device=pic32,link=eth" || doc.Baseline.LabelsText != "device=pic32,link=eth" ||
		doc.Runs[0].Name != "run "+id(plainB) || doc.Runs[0].LabelsText != "" ||
		doc.Comparisons[0].Name != "run "+id(plainB) || doc.Comparisons[0].BaselineName != "device=pic32,link=eth" {
		t.Errorf("JSON names: baseline %+v, run %+v, comparison %q vs %q", doc.Baseline, doc.Runs[0], doc.Comparisons[0].Name, doc.Comparisons[0].BaselineName)
	}
	if !strings.Contains(out, `"labels_text": "device=pic32,link=eth"`) || !strings.Contains(out, `"name": "device=pic32,link=eth"`) {
		t.Errorf("JSON lacks the label strings:\n%s", out)
	}
}

// TestShowServerTest: a test a server answered and saved shows as the
// server printed it, from its table on, interval rows (-i) included: a
// server's last row is the one it printed, even with data counted after
// the boundary before the end.
func TestShowServerTest(t *testing.T) {
	for _, proto := range [][]string{{"-u", "-b", "1M"}, nil} {
		db := filepath.Join(t.TempDir(), "results.db")
		sport := strconv.Itoa(loopback.FreePort(t))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		srvOut, srvErr, done := startServerCmd(ctx, t, []string{"server", "-B", "127.0.0.1", "-p", sport, "--iperf3-port", "0", "-1",
			"-i", "0.1", "--db", db}, "listening")
		args := append([]string{"client", "127.0.0.1", "-p", sport, "-t", "0.4", "--no-save"}, proto...)
		if code, _, errOut := cliRun(args...); code != exitOK {
			t.Fatalf("client %v: exit %d: %s", proto, code, errOut)
		}
		if code := <-done; code != exitOK {
			t.Fatalf("server: exit %d: %s", code, srvErr.String())
		}
		code, sh, errOut := cliRun("show", "role=server", "--db", db)
		if code != exitOK {
			t.Fatalf("show: exit %d: %s", code, errOut)
		}
		if got, want := fromTable(t, showBody(t, sh)), fromTable(t, srvOut.String()); got != want {
			t.Errorf("client %v: show differs from the server's output\nserver:\n%s\nshow:\n%s", proto, want, got)
		}
	}
}
