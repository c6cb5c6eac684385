package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
	"github.com/wirebench/wirebench/internal/web"
)

func TestWebUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"server", "--probe-allow", "127.0.0.0/8"}, "--probe-allow needs --web"},
		{[]string{"server", "--web", "localhost"}, "invalid --web"},
		{[]string{"server", "--web", "127.0.0.1:http"}, "invalid --web"},
		{[]string{"server", "--web", "70000"}, "invalid --web"},
		{[]string{"server", "--web", "8080", "--probe-allow", "lab"}, "invalid --probe-allow"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) { wantUsageError(t, tt.args, tt.want) })
	}
}

func TestWebAddr(t *testing.T) {
	for in, want := range map[string]string{
		"8080":           "127.0.0.1:8080",
		":8080":          "127.0.0.1:8080",
		"0.0.0.0:9000":   "0.0.0.0:9000",
		"[::1]:9000":     "[::1]:9000",
		"localhost:9000": "localhost:9000",
	} {
		got, err := webAddr(in)
		if err != nil || got != want {
			t.Errorf("webAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// wirebench server --web with a real iperf 2.1.8 client: the dashboard
// listens where it says, the test is in /api/runs with 1 s intervals,
// and the text output has no interval lines (-i was not given). The
// dashboard's history is the results store the server saves to (a file
// of this test's own), with each test's own labels (dialect, …).
func TestServerWebWithIperf(t *testing.T) {
	iperf, err := exec.LookPath("iperf")
	if err != nil {
		t.Skip("iperf (2.1.8) is not installed: apt-get install iperf")
	}
	port, wport := strconv.Itoa(loopback.FreePort(t)), strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, errOut, done := startServerCmd(ctx, t, []string{"server", "-B", "127.0.0.1", "-p", port, "--iperf3-port", "0", "--web", wport,
		"--db", filepath.Join(t.TempDir(), "results.db")}, "listening")
	if want := "dashboard on http://127.0.0.1:" + wport + "/"; !strings.Contains(errOut.String(), want) {
		t.Fatalf("stderr %q does not say %q", errOut.String(), want)
	}
	cmd := exec.CommandContext(ctx, iperf, "-c", "127.0.0.1", "-p", port, "-u", "-b", "1M", "-t", "2")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("iperf: %v\n%s", err, b)
	}
	var runs []web.RunSummary
	for deadline := time.Now().Add(5 * time.Second); len(runs) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		runs = nil
		resp, err := http.Get("http://127.0.0.1:" + wport + "/api/runs?label=dialect=iperf2")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&runs)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(runs) != 1 {
		t.Fatalf("runs %+v, want the iperf test", runs)
	}
	resp, err := http.Get("http://127.0.0.1:" + wport + "/api/runs/" + strconv.FormatInt(runs[0].ID, 10))
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Result result.Result `json:"result"`
	}
	err = json.NewDecoder(resp.Body).Decode(&run)
	resp.Body.Close()
	if err != nil || len(run.Result.Intervals) < 2 || run.Result.Intervals[0].End != 1 {
		t.Fatalf("run %+v (%v): want 1 s intervals", run.Result.Intervals, err)
	}
	if strings.Contains(out.String(), " 0.00-1.00 ") || !strings.Contains(out.String(), "receiver") {
		t.Fatalf("text output should have the summary and no interval lines:\n%s", out.String())
	}
	cancel()
	<-done
}

// wirebench web serves the dashboard over the results store alone: a run
// saved earlier is listed, filtered by label, and opens in full.
func TestWebCommandServesStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"schema":"wirebench/1","kind":"test","role":"client","test":{"protocol":"udp"},"intervals":[],"warnings":[]}`
	id, err := st.Save(ctx, &store.Run{Kind: "test", Labels: map[string]string{"device": "pic32"}, StartedAt: time.Now(),
		Target: "192.0.2.1:5001", Summary: "udp send 95.70 Mbits/sec", Result: []byte(doc)})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	wport := strconv.Itoa(loopback.FreePort(t))
	var out, errb loopback.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"web", wport, "--db", db}, &out, &errb) }()
	base := "http://127.0.0.1:" + wport
	var runs []web.RunSummary
	getJSONOnceUp(t, base+"/api/runs?label=device=pic32", &runs)
	if len(runs) != 1 || runs[0].ID != id || runs[0].Summary != "udp send 95.70 Mbits/sec" {
		t.Fatalf("runs %+v, want the saved run %d (stderr %q)", runs, id, errb.String())
	}
	resp, err := http.Get(base + "/api/runs/" + strconv.FormatInt(id, 10))
	if err != nil {
		t.Fatal(err)
	}
	var full web.Run
	err = json.NewDecoder(resp.Body).Decode(&full)
	resp.Body.Close()
	if err != nil || !strings.Contains(string(full.Result), `"protocol":"udp"`) {
		t.Fatalf("run %d: %+v (%v)", id, full, err)
	}
	if resp, err := http.Get(base + "/api/runs/999"); err != nil {
		t.Error(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a run not in the store: %s, want 404", resp.Status)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("web exited %d after the interrupt; stderr %q", code, errb.String())
	}
	if !strings.Contains(errb.String(), "dashboard of "+db) {
		t.Errorf("stderr %q does not say which store is shown", errb.String())
	}
}

// wirebench server --web counts the echo tests it answers: after one
// `wirebench latency` run of 12 UDP requests, /metrics has exactly one
// UDP echo test that ended well, with the 12 requests the client had
// answered.
func TestServerWebCountsEchoTests(t *testing.T) {
	port, wport := strconv.Itoa(loopback.FreePort(t)), strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _, done := startServerCmd(ctx, t, []string{"server", "-B", "127.0.0.1", "-p", port, "--iperf3-port", "0", "--web", wport, "--no-save"}, "listening")
	var out, errb loopback.Buffer
	if code := run(ctx, []string{"latency", "127.0.0.1", "-p", port, "-c", "12", "--json", "--no-save"}, &out, &errb); code != exitOK {
		t.Fatalf("latency exited %d: %s", code, errb.String())
	}
	var res struct {
		Received int64 `json:"received"`
	}
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil || res.Received != 12 {
		t.Fatalf("latency result %q (%v): want 12 answered over loopback", out.String(), err)
	}
	want := []string{`wirebench_server_echo_tests_total{kind="udp",outcome="ok"} 1`, `wirebench_server_echo_requests_total{kind="udp"} 12`,
		`wirebench_server_echo_last_test_requests{kind="udp"} 12`}
	var body string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://127.0.0.1:" + wport + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if body = string(b); strings.Contains(body, want[0]) {
			break
		}
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("/metrics lacks %q:\n%s", w, grepLines(body, "echo"))
		}
	}
	cancel()
	<-done
}

// grepLines keeps the lines of s that contain sub.
func grepLines(s, sub string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// wirebench web compares two sweeps saved in the store: /api/compare sets
// the slower device's sweep against the faster's size by size, and calls
// it a regression.
func TestWebCommandComparesSweeps(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, capPPS := range []float64{5000, 4000} {
		// A real sweep against a device that forwards at most capPPS a second.
		device := sweep.RunnerFunc(func(_ context.Context, s sweep.Spec) (result.SweepOutcome, error) {
			secs := s.Duration.Seconds()
			sent := int64(math.Round(s.RatePPS * secs))
			got := min(sent, int64(math.Floor(capPPS*secs)))
			return result.SweepOutcome{Sent: sent, OfferedPPS: s.RatePPS, Received: got, Lost: sent - got, Total: sent, SendSeconds: secs, ReceiveSeconds: secs, BacklogKnown: true}, nil
		})
		res := sweep.NewResult(result.SweepTest{Mode: "reflect", Host: "192.0.2.1", Port: 5001, Sizes: []int{512, 1470}})
		cfg := sweep.Config{Sizes: []int{512, 1470}, MaxPPS: func(int) float64 { return 20000 }, Trial: time.Second,
			Sleep: func(context.Context, time.Duration) error { return nil }}
		if err := sweep.Run(ctx, cfg, device, res); err != nil {
			t.Fatal(err)
		}
		doc, _ := json.Marshal(res)
		id, err := st.Save(ctx, &store.Run{Kind: result.KindSweep, StartedAt: res.StartedAt, Target: "192.0.2.1:5001", Summary: sweep.Summary(res), Result: doc})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	st.Close()
	wport := strconv.Itoa(loopback.FreePort(t))
	var out, errb loopback.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"web", wport, "--db", db}, &out, &errb) }()
	url := fmt.Sprintf("http://127.0.0.1:%s/api/compare?a=%d&b=%d", wport, ids[0], ids[1])
	var c web.Comparison
	getJSONOnceUp(t, url, &c)
	if c.Verdict != "regression" || len(c.Metrics) != 2 {
		t.Fatalf("comparison %+v, want a regression over 2 sizes (stderr %q)", c, errb.String())
	}
	for _, m := range c.Metrics {
		if !strings.HasPrefix(m.Name, "rate_pps@") || m.Ratio == nil || math.Abs(*m.Ratio-0.8) > 0.02 || m.Verdict != "worse" {
			t.Errorf("%s: A %.0f B %.0f ratio %v verdict %s, want B/A ≈ 0.8, worse", m.Name, m.A, m.B, m.Ratio, m.Verdict)
		}
	}
	if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%s/api/compare?a=%d&b=999", wport, ids[0])); err != nil {
		t.Error(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a run not in the store: %s, want 404", resp.Status)
	}
	cancel()
	<-done
}

// getJSONOnceUp decodes the JSON at url into v, retrying for up to 10 s
// while nothing listens yet (a web command that is starting).
func getJSONOnceUp(t *testing.T, url string, v any) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(url)
		if err != nil {
			continue // not listening yet
		}
		err = json.NewDecoder(resp.Body).Decode(v)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("decoding %s: %v", url, err)
		}
		return
	}
	t.Fatalf("nothing answered at %s within 10 s", url)
}
