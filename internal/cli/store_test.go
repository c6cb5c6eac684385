package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/compare"
	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/store"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// cliRun runs wirebench with args and returns exit code, stdout, stderr.
func cliRun(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// startEchoServer runs a wirebench session server with the echo service on
// a free loopback port until the test ends.
func startEchoServer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := iperf2.Listen(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	echo.Register(srv, echo.ServerConfig{})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return strconv.Itoa(srv.Port())
}

// TestRunsAreSaved: client tests, latency runs and server tests are saved
// with their labels, configuration and whole result; --no-save saves
// nothing; history filters them and show prints them back.
func TestRunsAreSaved(t *testing.T) {
	port := startEchoServer(t)
	db := filepath.Join(t.TempDir(), "results.db")
	code, out, errOut := cliRun("client", "127.0.0.1", "-p", port, "-u", "-b", "2M", "-t", "0.5", "-i", "0.1", "--json",
		"--db", db, "--label", "device=pic32", "--label", "link=usb")
	if code != exitOK {
		t.Fatalf("client: exit %d: %s", code, errOut)
	}
	var printed result.Result
	if err := json.Unmarshal([]byte(out), &printed); err != nil {
		t.Fatal(err)
	}
	for _, w := range printed.Warnings {
		if strings.Contains(w, "results store") {
			t.Errorf("a store warning although the store works: %q", w)
		}
	}
	if code, _, errOut := cliRun("latency", "127.0.0.1", "-p", port, "-c", "5", "-i", "0", "--db", db, "--label", "link=usb"); code != exitOK {
		t.Fatalf("latency: exit %d: %s", code, errOut)
	}
	if code, _, errOut := cliRun("client", "127.0.0.1", "-p", port, "-t", "0.2", "--db", db, "--no-save", "--label", "nosave=1"); code != exitOK {
		t.Fatalf("client --no-save: exit %d: %s", code, errOut)
	}

	// A server test, saved by the server with its own label.
	sport := strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, srvErr, done := startServerCmd(ctx, t, []string{"server", "-B", "127.0.0.1", "-p", sport, "--iperf3-port", "0", "-1",
		"--db", db, "--label", "side=server"}, "listening")
	if code, _, errOut := cliRun("client", "127.0.0.1", "-p", sport, "-t", "0.3", "--no-save"); code != exitOK {
		t.Fatalf("client against the server: exit %d: %s", code, errOut)
	}
	if code := <-done; code != exitOK {
		t.Fatalf("server: exit %d: %s", code, srvErr.String())
	}

	code, out, errOut = cliRun("history", "--db", db, "--json")
	if code != exitOK {
		t.Fatalf("history: exit %d: %s", code, errOut)
	}
	var h struct {
		Kind, Store string
		Runs        []store.Run
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range h.Runs {
		kinds = append(kinds, r.Kind+"/"+result.FormatLabels(r.Labels))
	}
	if h.Kind != "history" || h.Store != db ||
		strings.Join(kinds, " ") != "test/device=pic32,dialect=iperf2,direction=send,link=usb,peer=127.0.0.1,protocol=udp,role=client "+
			"request-response/link=usb test/dialect=iperf2,direction=receive,peer=127.0.0.1,protocol=tcp,role=server,side=server" {
		t.Fatalf("history: %s %s %v", h.Kind, h.Store, kinds)
	}
	if !strings.HasPrefix(h.Runs[0].Summary, "udp send ") || h.Runs[0].Target != "127.0.0.1:"+port {
		t.Errorf("run 1: %+v", h.Runs[0])
	}
	if !strings.HasPrefix(h.Runs[2].Summary, "tcp receive ") {
		t.Errorf("server run: %+v", h.Runs[2])
	}

	// Filters.
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--label", "link=usb"}, 2},
		{[]string{"--label", "link=usb", "--kind", "test"}, 1},
		{[]string{"--since", "1h"}, 3},
		{[]string{"--since", "2099-01-01"}, 0},
		{[]string{"-n", "1"}, 1},
	} {
		code, out, errOut := cliRun(append([]string{"history", "--db", db, "--csv"}, tc.args...)...)
		if n := strings.Count(out, "\n") - 1; code != exitOK || n != tc.want {
			t.Errorf("history %v: exit %d, %d runs, want %d\n%s%s", tc.args, code, n, tc.want, out, errOut)
		}
	}
	code, out, _ = cliRun("history", "--db", db)
	if code != exitOK || !strings.Contains(out, "device=pic32,dialect=iperf2,direction=send,link=usb") || !strings.Contains(out, "ID  STARTED (UTC)") {
		t.Errorf("history text:\n%s", out)
	}

	// show: the saved record holds the whole result as printed, the
	// configuration and the host.
	id := h.Runs[0].ID
	code, out, errOut = cliRun("show", strconv.FormatInt(id, 10), "--db", db, "--json")
	if code != exitOK {
		t.Fatalf("show --json: exit %d: %s", code, errOut)
	}
	var shown struct {
		Kind   string
		Result result.Result
		Config struct {
			Command string
			Flags   map[string]string
		}
		Host store.HostFacts
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.Kind != "run" || shown.Result.Receiver == nil || printed.Receiver == nil ||
		shown.Result.Receiver.BitsPerSecond != printed.Receiver.BitsPerSecond || len(shown.Result.Intervals) != len(printed.Intervals) ||
		len(printed.Intervals) < 4 {
		t.Errorf("show --json result differs from the printed one:\n%s", out)
	}
	if shown.Config.Command != "wirebench client" || shown.Config.Flags["bandwidth"] != "2M" || shown.Config.Flags["db"] != db ||
		shown.Host.OS == "" || shown.Host.CPUs == 0 {
		t.Errorf("show --json config/host: %+v %+v", shown.Config, shown.Host)
	}
	code, out, _ = cliRun("show", "device=pic32", "--db", db)
	for _, want := range []string{fmt.Sprintf("run %d: udp send", id), "labels    device=pic32,dialect=iperf2,direction=send,link=usb,peer=127.0.0.1,protocol=udp,role=client", "command   wirebench client 127.0.0.1",
		"0.00-0.10", "receiver"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("show text lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = cliRun("show", "link=usb", "--db", db)
	if code != exitOK || !strings.Contains(out, "latency: udp echo to 127.0.0.1:"+port) || !strings.Contains(out, "sent 5, answered 5") {
		t.Errorf("show of the newest link=usb run (the latency run) in latency's layout:\n%s", out)
	}
	if code, _, errOut := cliRun("show", "9999", "--db", db); code != exitFailure || !strings.Contains(errOut, "no such run") {
		t.Errorf("show of a missing run: exit %d: %s", code, errOut)
	}
	if code, _, _ := cliRun("show", "nolabel", "--db", db); code != exitUsage {
		t.Errorf("show of a malformed selector: exit %d", code)
	}
	if code, _, _ := cliRun("client", "127.0.0.1", "--label", "novalue", "--db", db); code != exitUsage {
		t.Errorf("client --label novalue: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := cliRun("history", "--since", "yesterday", "--db", db); code != exitUsage {
		t.Errorf("history --since yesterday: exit %d, want %d", code, exitUsage)
	}
}

// TestUnwritableStoreWarns: a store that cannot be written (a path under a
// regular file; a PostgreSQL server that is not there) costs one warning
// line on stderr and one in the JSON; the measurement still prints and the
// exit code stays 0.
func TestUnwritableStoreWarns(t *testing.T) {
	port := startEchoServer(t)
	file := filepath.Join(t.TempDir(), "plainfile")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{filepath.Join(file, "results.db"), "postgres://wb:secret@127.0.0.1:1/wb?connect_timeout=2"} {
		// --dialect: no probe, whose notice would be a second stderr line.
		code, out, errOut := cliRun("client", "127.0.0.1", "-p", port, "-t", "0.2", "--json", "--dialect", "iperf2", "--db", db)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", db, code, errOut)
		}
		var r result.Result
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Receiver == nil {
			t.Fatalf("%s: the measurement was not printed: %v\n%s", db, err, out)
		}
		n := 0
		for _, w := range r.Warnings {
			if strings.Contains(w, "not saved in the results store") {
				n++
			}
		}
		if n != 1 || strings.Count(errOut, "warning: this run was not saved") != 1 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: want one warning in the JSON (%d) and one stderr line:\n%s", db, n, errOut)
		}
		if strings.Contains(out+errOut, "secret") {
			t.Errorf("the database password was printed:\n%s%s", out, errOut)
		}
		// Text: the summary on stdout, the warning on stderr only.
		code, out, errOut = cliRun("latency", "127.0.0.1", "-p", port, "-c", "3", "-i", "0", "--db", db)
		if code != exitOK || !strings.Contains(out, "answered 3") || strings.Contains(out, "results store") ||
			strings.Count(errOut, "warning: this run was not saved") != 1 {
			t.Errorf("%s latency text: exit %d\nstdout: %s\nstderr: %s", db, code, out, errOut)
		}
	}
}

// TestServerUnwritableStoreWarns: a server whose store cannot be written
// prints each test's JSON line with the warning, and says it once on
// stderr.
func TestServerUnwritableStoreWarns(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plainfile")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, errOut, done := startServerCmd(ctx, t, []string{"server", "-B", "127.0.0.1", "-p", port, "--iperf3-port", "0", "-1", "--json",
		"--db", filepath.Join(file, "results.db")}, "listening")
	if code, _, cerr := cliRun("client", "127.0.0.1", "-p", port, "-t", "0.3", "--no-save"); code != exitOK {
		t.Fatalf("client: exit %d: %s", code, cerr)
	}
	if code := <-done; code != exitOK {
		t.Fatalf("server: exit %d: %s", code, errOut.String())
	}
	var r result.Result
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil || r.Receiver == nil {
		t.Fatalf("server JSON: %v\n%s", err, out.String())
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "not saved in the results store") ||
		strings.Count(errOut.String(), "warning: this run was not saved") != 1 {
		t.Errorf("warnings %q; stderr:\n%s", r.Warnings, errOut.String())
	}
}

// saveDoc saves a result document with labels straight into the store.
func saveDoc(t *testing.T, db, doc string, labels ...string) int64 {
	t.Helper()
	l, err := store.ParseLabels(labels)
	if err != nil {
		t.Fatal(err)
	}
	id, err := store.Save(context.Background(), db, &store.Run{Kind: result.KindTest, Labels: l, Result: json.RawMessage(doc)})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// udpTestDoc is a UDP test result with the given interval rates (Mbit/s).
func udpTestDoc(summary float64, intervals []float64, warnings ...string) string {
	var ins []string
	for i, v := range intervals {
		ins = append(ins, fmt.Sprintf(`{"start_s":%d,"end_s":%d,"bits_per_second":%g,"packets":1000,"lost":%d,"jitter_ms":0.1}`, i, i+1, v*1e6, i%2))
	}
	w, _ := json.Marshal(warnings)
	if warnings == nil {
		w = []byte("[]")
	}
	return fmt.Sprintf(`{"schema":"wirebench/1","kind":"test","test":{"protocol":"udp"},"intervals":[%s],
		"receiver":{"bits_per_second":%g,"packets":4000,"lost":2,"jitter_ms":0.1},"warnings":%s}`, strings.Join(ins, ","), summary*1e6, w)
}

// TestCompareCommand: ratios, intervals, verdicts and exit codes, on runs
// with known figures.
func TestCompareCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	a := saveDoc(t, db, udpTestDoc(100, []float64{99, 101, 100, 100}), "link=eth")
	b := saveDoc(t, db, udpTestDoc(88.4, []float64{88, 89, 88, 88.6}), "link=usb")
	c := saveDoc(t, db, udpTestDoc(97, []float64{97, 97, 97, 97}, "the sender fell behind"), "link=usb", "fw=2")

	code, out, errOut := cliRun("compare", "link=eth", strconv.FormatInt(b, 10), "--db", db)
	if code != exitOK {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	for _, want := range []string{fmt.Sprintf("link=usb is 88.4 %% of link=eth in throughput (run %d vs run %d)", b, a), "throughput", "88.4 ±", "-11.60 Mbit/s ±"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare text lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = cliRun("compare", strconv.FormatInt(a, 10), strconv.FormatInt(b, 10), "--db", db, "--fail-below", "95%")
	if code != exitThreshold || !strings.Contains(out, "verdict: FAIL") ||
		!strings.Contains(out, fmt.Sprintf("link=usb (run %d): throughput is 88.4 %% of the baseline's, below 95.0 %%", b)) {
		t.Errorf("--fail-below 95%%: exit %d\n%s", code, out)
	}
	if code, out, _ = cliRun("compare", "link=eth", "link=usb,fw=2", "--db", db, "--fail-below", "95"); code != exitOK || !strings.Contains(out, "verdict: PASS") {
		t.Errorf("97 %% against --fail-below 95: exit %d\n%s", code, out)
	}
	// Lower is better: jitter judged with --fail-above.
	if code, _, _ = cliRun("compare", "link=eth", "link=usb,fw=2", "--db", db, "--metric", "jitter_ms", "--fail-above", "110%"); code != exitOK {
		t.Errorf("equal jitter against --fail-above 110%%: exit %d", code)
	}

	code, out, _ = cliRun("compare", "link=eth", strconv.FormatInt(b, 10), "link=usb", "--db", db, "--json", "--fail-below", "90%")
	var doc compare.Doc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if code != exitThreshold || doc.Kind != "compare" || doc.Baseline.ID != a || len(doc.Comparisons) != 2 || doc.Verdict == nil || doc.Verdict.Passed ||
		doc.Verdict.Metric != "throughput" || len(doc.Verdict.Reasons) != 1 {
		t.Fatalf("compare --json: exit %d\n%s", code, out)
	}
	if r := doc.Comparisons[0].Ratio["throughput"]; r < 0.8839 || r > 0.8841 {
		t.Errorf("ratio %v, want 0.884", r)
	}
	if d := doc.Comparisons[0].Metrics[0]; d.RatioCI95 == nil || d.DifferenceCI95 == nil || *d.DifferenceCI95 <= 0 {
		t.Errorf("no confidence interval from 4 intervals each: %+v", d)
	}
	// "link=usb" matches two runs: the newest (c) is used, and the run's own
	// warning comes along.
	if doc.Comparisons[1].Run != c || !strings.Contains(strings.Join(doc.Warnings, "\n"), "matches more than one run") ||
		!strings.Contains(strings.Join(doc.Warnings, "\n"), fmt.Sprintf("run %d: the sender fell behind", c)) {
		t.Errorf("warnings %q, comparison run %d", doc.Warnings, doc.Comparisons[1].Run)
	}

	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"compare", "link=eth"}, exitUsage},
		{[]string{"compare", "link=eth", "nolabel"}, exitUsage},
		{[]string{"compare", "link=eth", "link=usb", "--fail-below", "lots"}, exitUsage},
		{[]string{"compare", "link=eth", "link=wifi"}, exitFailure},
		{[]string{"compare", "link=eth", "link=usb", "--metric", "nope"}, exitFailure},
	} {
		if code, _, errOut := cliRun(append(tc.args, "--db", db)...); code != tc.code {
			t.Errorf("%v: exit %d, want %d: %s", tc.args, code, tc.code, errOut)
		}
	}
}

// TestCompareCSVNamesRuns: --csv keeps its columns by position and adds
// the runs' names as the text calls them, quoted where they hold commas.
func TestCompareCSVNamesRuns(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	a := saveDoc(t, db, udpTestDoc(100, []float64{99, 101, 100, 100}), "link=eth", "device=pic32")
	b := saveDoc(t, db, udpTestDoc(88.4, []float64{88, 89, 88, 88.6}), "link=usb", "device=pic32")
	c := saveDoc(t, db, udpTestDoc(97, []float64{97, 97, 97, 97}), "link=usb", "fw=2")
	code, out, errOut := cliRun("compare", strconv.FormatInt(a, 10), strconv.FormatInt(b, 10), "fw=2,link=usb", "--db", db, "--csv")
	if code != exitOK {
		t.Fatalf("compare --csv: exit %d: %s", code, errOut)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("compare --csv is no CSV: %v\n%s", err, out)
	}
	want := "baseline,run,metric,unit,a,b,ratio,ratio_ci95,difference,difference_ci95,baseline_name,run_name,a_bound,b_bound"
	if len(rows) == 0 || strings.Join(rows[0], ",") != want {
		t.Fatalf("header %q, want %q", rows[0], want)
	}
	// Runs a and b were asked for by id: named by the labels not all
	// three carry (device=pic32 is on a and b but not on c).
	names := map[int64][2]string{b: {"device=pic32,link=eth", "device=pic32,link=usb"}, c: {"device=pic32,link=eth", "fw=2,link=usb"}}
	seen := map[int64]bool{}
	for _, r := range rows[1:] {
		if len(r) != 14 || r[12] != "" || r[13] != "" {
			t.Fatalf("row %q has %d columns, want 14 with no bound", r, len(r))
		}
		run, _ := strconv.ParseInt(r[1], 10, 64)
		if r[0] != strconv.FormatInt(a, 10) || [2]string{r[10], r[11]} != names[run] {
			t.Errorf("row %q: want baseline %d and names %q", r, a, names[run])
		}
		if r[2] == "throughput" && run == b && !strings.HasPrefix(r[6], "0.884") {
			t.Errorf("throughput ratio %q, want 0.884", r[6])
		}
		seen[run] = true
	}
	if !seen[b] || !seen[c] {
		t.Errorf("runs in the CSV %v, want %d and %d:\n%s", seen, b, c, out)
	}
}

// TestPingIsSaved: a ping run is saved with its kind, target and summary.
func TestPingIsSaved(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	code, _, errOut := cliRun("ping", "127.0.0.1", "-c", "2", "-i", "10ms", "-q", "--db", db, "--label", "what=ping")
	if code != exitOK {
		t.Skipf("ping on loopback is not possible here (exit %d): %s", code, errOut)
	}
	code, out, _ := cliRun("history", "--db", db, "--kind", "ping", "--csv")
	if code != exitOK || !strings.Contains(out, ",ping,127.0.0.1,what=ping,56 B 2/2 avg ") {
		t.Errorf("history of the ping run: exit %d\n%s", code, out)
	}
}

// TestSavedRunIsNamed: a command that saves a run names it, so `show`,
// `report` and `compare` can be given it: text output ends with "saved as
// run N" on stderr, a JSON document carries run_id (and nothing more on
// stderr); a run not saved says nothing. history --kind with a kind that
// does not exist is a usage error listing the kinds.
func TestSavedRunIsNamed(t *testing.T) {
	port := startEchoServer(t)
	db := filepath.Join(t.TempDir(), "results.db")
	code, _, errOut := cliRun("client", "127.0.0.1", "-p", port, "-t", "0.2", "--db", db)
	if code != exitOK || !strings.HasSuffix(errOut, "wirebench: saved as run 1\n") {
		t.Errorf("client, text: exit %d, stderr %q; want it to end with saved as run 1", code, errOut)
	}
	code, out, errOut := cliRun("client", "127.0.0.1", "-p", port, "-t", "0.2", "--db", db, "--json")
	var r struct {
		RunID int64 `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(out), &r); code != exitOK || err != nil || r.RunID != 2 || strings.Contains(errOut, "saved as") {
		t.Errorf("client --json: exit %d, run_id %d (%v), stderr %q; want run_id 2 and no line", code, r.RunID, err, errOut)
	}
	code, _, errOut = cliRun("latency", "127.0.0.1", "-p", port, "-c", "3", "-i", "0", "--db", db)
	if code != exitOK || !strings.HasSuffix(errOut, "wirebench: saved as run 3\n") {
		t.Errorf("latency, text: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = cliRun("client", "127.0.0.1", "-p", port, "-t", "0.2", "--db", db, "--no-save")
	if code != exitOK || strings.Contains(errOut, "saved as") {
		t.Errorf("client --no-save: exit %d, stderr %q", code, errOut)
	}

	code, out, errOut = cliRun("history", "--db", db, "--kind", "sweeps")
	if code != exitUsage || out != "" || !strings.Contains(errOut, `invalid --kind "sweeps": want one of test, ping, request-response, under-load, matrix, sweep`) {
		t.Errorf("history --kind sweeps: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestHistoryPrune: history --prune deletes, of the runs its labels
// select, those beyond the newest --keep and those older than
// --older-than, says how many, and leaves the others; without a rule, or
// with --since, it is a usage error that deletes nothing.
func TestHistoryPrune(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	now := time.Now().UTC()
	for i, lab := range []string{"a", "a", "a", "b"} {
		_, err := store.Save(context.Background(), db, &store.Run{Kind: result.KindTest, Labels: map[string]string{"lab": lab},
			StartedAt: now.Add(-time.Duration(40-10*i) * 24 * time.Hour), Result: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		t.Helper()
		code, out, errOut := cliRun("history", "--db", db, "--csv")
		if code != 0 {
			t.Fatalf("history: %d %s", code, errOut)
		}
		return strings.Count(out, "\n") - 1
	}
	for _, args := range [][]string{{"--prune"}, {"--prune", "--keep", "1", "--since", "1d"}, {"--prune", "--older-than", "soon"}} {
		if code, _, errOut := cliRun(append([]string{"history", "--db", db}, args...)...); code != 2 || errOut == "" {
			t.Errorf("history %v: exit %d, %q; want a usage error", args, code, errOut)
		}
	}
	if n := count(); n != 4 {
		t.Fatalf("%d runs after refused prunes, want 4", n)
	}
	code, out, errOut := cliRun("history", "--db", db, "--prune", "--label", "lab=a", "--keep", "1")
	if code != 0 || !strings.HasPrefix(out, "pruned 2 runs from ") {
		t.Fatalf("prune --keep 1 of lab=a: %d %q %q", code, out, errOut)
	}
	code, out, _ = cliRun("history", "--db", db, "--prune", "--older-than", "15d")
	if code != 0 || !strings.HasPrefix(out, "pruned 1 run from ") {
		t.Fatalf("prune --older-than 15d: %d %q", code, out)
	}
	if n := count(); n != 1 {
		t.Errorf("%d runs left, want 1 (lab=b, 10 days old)", n)
	}
}
