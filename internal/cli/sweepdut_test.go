package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/testutil/standin"
)

// sweepDUTArgs is a short sweep of the fake Zephyr shell's server: three
// sizes, well below what loopback carries, so that each size passes at
// the highest rate and is confirmed (two trials).
func sweepDUTArgs(addr string, port int, more ...string) []string {
	return append([]string{"sweep", "127.0.0.1", "-p", fmt.Sprint(port), "--sizes", "200,600,1000", "--max-rate", "1000pps",
		"--trial", "300ms", "--confirm", "0", "--gap", "50ms", "--loss", "1%", "--no-bisect", "--dut", "telnet:" + addr, "--dut-shell", "zephyr",
		"--dut-timeout", "1", "--dut-report-timeout", "3", "--no-save"}, more...)
}

// sweepJSON runs a sweep with --json, expects exit code want and returns
// its document and stderr.
func sweepJSON(t *testing.T, ctx context.Context, args []string, want int) (result.Sweep, string) {
	t.Helper()
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(ctx, append(args, "--json"), &out, &errb)
	t.Logf("sweep took %v", time.Since(start))
	if code != want {
		t.Fatalf("exit %d, want %d: %s\n%s", code, want, errb.String(), out.String())
	}
	var res result.Sweep
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	return res, errb.String()
}

// drain collects what the stand-in server behind the fake shell counted,
// one result per trial, in order.
func drain(got chan standin.UDPServerResult) []standin.UDPServerResult {
	var out []standin.UDPServerResult
	for {
		select {
		case r := <-got:
			out = append(out, r)
		case <-time.After(500 * time.Millisecond):
			return out
		}
	}
}

// `wirebench sweep --dut` starts the device's server through its shell for
// every trial: every trial, and so every size's point, carries the
// device's own figures, and its packet count is what the stand-in receiver
// behind the shell really counted in that trial. The session's transcript
// is in the JSON.
func TestSweepDUT(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr, got, _ := telnetZephyrFake(t, ctx, fakeZephyr{})
	tr := filepath.Join(t.TempDir(), "dut.txt")
	db := filepath.Join(t.TempDir(), "runs.db")
	args := sweepDUTArgs(addr, freeLoopbackPort(t), "--dut-transcript", tr, "--db", db)
	res, _ := sweepJSON(t, ctx, slices.DeleteFunc(args, func(a string) bool { return a == "--no-save" }), exitOK)
	counted := drain(got)
	var trials []result.SweepTrial
	for _, s := range res.Sizes {
		trials = append(trials, s.TrialLog...)
	}
	if len(res.Sizes) != 3 || len(trials) != len(counted) {
		t.Fatalf("%d sizes, %d trials; the stand-in counted %d sessions: %+v", len(res.Sizes), len(trials), len(counted), res.Sizes)
	}
	for i, tl := range trials {
		d := tl.Device
		if d == nil || d.Packets == nil || *d.Packets != counted[i].Counted || d.Lost == nil || *d.Lost != int64(counted[i].Lost) {
			t.Errorf("trial %d at %.0f/s: device %+v; the stand-in counted %d packets, %d lost", i+1, tl.RatePPS, d, counted[i].Counted, counted[i].Lost)
		}
		if counted[i].Counted == 0 || tl.CountedBy == "" || len(d.Transcript) != 0 {
			t.Errorf("trial %d: counted by %q, stand-in counted %d, per-trial transcript %d lines", i+1, tl.CountedBy, counted[i].Counted, len(d.Transcript))
		}
	}
	for _, s := range res.Sizes {
		if s.Device == nil || s.Device.Packets == nil || s.Device.Shell != "zephyr" || s.Device.Role != "server" || s.CountedBy == "" || s.RatePPS <= 0 {
			t.Errorf("size %d: device %+v, counted by %q, rate %v", s.Size, s.Device, s.CountedBy, s.RatePPS)
		}
	}
	if res.Device == nil || res.Device.Shell != "zephyr" || res.Test.DUT != "telnet:"+addr || res.Device.Error != "" {
		t.Fatalf("device session %+v, test %+v", res.Device, res.Test)
	}
	starts := 0
	for _, l := range res.Device.Transcript {
		if strings.Contains(l, "> zperf udp download ") && !strings.HasSuffix(l, "stop") {
			starts++
		}
	}
	if starts != len(trials) {
		t.Errorf("the transcript has %d server starts for %d trials", starts, len(trials))
	}
	if b, err := os.ReadFile(tr); err != nil || strings.Count(string(b), "zperf udp download") < 2*len(trials) {
		t.Errorf("--dut-transcript file: %v\n%s", err, b)
	}
	// The results store keeps the document with the device's figures and
	// the transcript.
	code, out, errOut := cliRun("show", "1", "--db", db, "--json")
	var shown struct {
		Kind   string
		Result result.Sweep
	}
	if err := json.Unmarshal([]byte(out), &shown); code != exitOK || err != nil {
		t.Fatalf("show: exit %d, %v: %s%s", code, err, errOut, out)
	}
	if d := shown.Result.Device; d == nil || len(d.Transcript) != len(res.Device.Transcript) || len(shown.Result.Sizes) != 3 ||
		shown.Result.Sizes[0].Device == nil || *shown.Result.Sizes[0].Device.Packets != *res.Sizes[0].Device.Packets {
		t.Errorf("the stored sweep lost the device's record: %+v", shown.Result)
	}
	// show --transcript prints the stored session, every line of it.
	code, out, errOut = cliRun("show", "1", "--db", db, "--transcript")
	if want := fmt.Sprintf("# run 1: device shell transcript (%d lines)\n%s\n", len(res.Device.Transcript), strings.Join(res.Device.Transcript, "\n")); code != exitOK || out != want {
		t.Errorf("show --transcript: exit %d, %s\n%q\nwant\n%q", code, errOut, out, want)
	}
}

// show --transcript on a run made without --dut says there is none.
func TestShowTranscriptNone(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	port := startEchoServer(t)
	if code, _, errOut := cliRun("client", "127.0.0.1", "-p", port, "-t", "0.2", "--db", db); code != exitOK {
		t.Fatalf("client: exit %d: %s", code, errOut)
	}
	code, out, errOut := cliRun("show", "1", "--db", db, "--transcript")
	if code != exitFailure || out != "" || !strings.Contains(errOut, "no device shell transcript") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// The text output puts the device's figures beside ours per size; the CSV
// has them per size too.
func TestSweepDUTText(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, format := range []string{"text", "--csv"} {
		addr, got, _ := telnetZephyrFake(t, ctx, fakeZephyr{}) // the fake serves one session
		var out, errb bytes.Buffer
		args := sweepDUTArgs(addr, freeLoopbackPort(t))
		args[5] = "1000" // one size
		if format != "text" {
			args = append(args, format)
		}
		if code := run(ctx, args, &out, &errb); code != exitOK {
			t.Fatalf("%s: exit %d: %s\n%s", format, code, errb.String(), out.String())
		}
		t.Logf("\n%s", out.String())
		counted := drain(got)
		if len(counted) == 0 {
			t.Fatal("the stand-in counted nothing")
		}
		last := counted[len(counted)-1]
		want := []string{"device zephyr (telnet:", "counted by", "dev rx", fmt.Sprintf(" %d ", last.Counted), "received "}
		if format == "--csv" {
			want = []string{",counted_by,device_packets,device_lost,device_bps,held_s,tried_pps,status,reason\n", fmt.Sprintf(",peer_report,%d,%d,", last.Counted, last.Lost)}
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: no %q", format, w)
			}
		}
	}
}

// A device that fails mid-sweep — goes silent, answers garbage, resets or
// drops the line — ends the sweep with the device's error within
// --dut-timeout (plus the trial under way), exit 1, and the JSON keeps the
// sizes finished before, with their device figures, the unfinished size
// and the transcript.
func TestSweepDUTFailsMidSweep(t *testing.T) {
	for _, c := range []struct{ fail, want string }{
		{"silent", "no answer from the device"},
		{"garbage", `no answer from the device in time within 1s (last device output`},
		{"reset", "boot banner"},
		{"drop", "closed"},
	} {
		t.Run(c.fail, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			// It fails at the first server start after a session of
			// 600-byte datagrams: 200 B has finished by then, and the
			// sweep ends in 600 B or 1000 B.
			addr, got, _ := telnetZephyrFake(t, ctx, fakeZephyr{fail: c.fail, failAfter: func(r standin.UDPServerResult) bool {
				return r.Counted > 0 && r.Bytes/uint64(r.Counted) >= 600
			}})
			start := time.Now()
			res, stderr := sweepJSON(t, ctx, sweepDUTArgs(addr, freeLoopbackPort(t)), exitFailure)
			el := time.Since(start)
			t.Logf("stderr:\n%s", stderr)
			if !strings.Contains(stderr, "the device (zephyr) failed") || !strings.Contains(stderr, c.want) {
				t.Fatalf("stderr %q: want the device's failure, %q", stderr, c.want)
			}
			counted := drain(got)
			if len(res.Sizes) < 1 || res.Sizes[0].Size != 200 || res.Sizes[0].Device == nil || res.Sizes[0].Device.Packets == nil {
				t.Fatalf("want the 200 B point kept with its device figures: %+v", res.Sizes)
			}
			if res.Unfinished == nil || res.Unfinished.Size <= 200 || res.Error == "" || res.Device == nil ||
				!strings.Contains(res.Device.Error, c.want) || len(res.Device.Transcript) == 0 {
				t.Fatalf("unfinished %+v, error %q, device %+v", res.Unfinished, res.Error, res.Device)
			}
			// Every trial recorded is one the stand-in counted.
			n := len(res.Unfinished.TrialLog)
			for _, s := range res.Sizes {
				n += len(s.TrialLog)
			}
			if n != len(counted) {
				t.Errorf("%d trials recorded, the stand-in counted %d sessions", n, len(counted))
			}
			// The failing trial: its 300 ms, the 1 s step timeout and our
			// client's wait for a report that cannot come, with a wide
			// margin.
			if el > 25*time.Second {
				t.Errorf("took %v", el)
			}
		})
	}
}

// A device server that sends no report back (firmware that prints its
// figures only on its console): each trial's loss is judged on the
// device's own counts, parsed from its shell, and the JSON says so.
func TestSweepDUTCountedByDevice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr, got, _ := telnetZephyrFake(t, ctx, fakeZephyr{mute: true})
	args := sweepDUTArgs(addr, freeLoopbackPort(t))
	args[5] = "1000" // one size: each trial waits ~2 s for the report that does not come
	res, _ := sweepJSON(t, ctx, args, exitOK)
	counted := drain(got)
	if len(res.Sizes) != 1 || len(res.Sizes[0].TrialLog) != len(counted) || res.Sizes[0].CountedBy != result.CountedByDevice {
		t.Fatalf("sizes %+v; the stand-in counted %d sessions", res.Sizes, len(counted))
	}
	for i, tl := range res.Sizes[0].TrialLog {
		c := counted[i]
		if tl.CountedBy != result.CountedByDevice || tl.NoReport || tl.Received != c.Counted || tl.Lost != int64(c.Lost) ||
			tl.Total != c.Counted+int64(c.Lost) || c.Counted == 0 {
			t.Errorf("trial %d: counted by %q, received %d lost %d total %d (no report %v); the stand-in counted %d, lost %d",
				i+1, tl.CountedBy, tl.Received, tl.Lost, tl.Total, tl.NoReport, c.Counted, c.Lost)
		}
		// Nothing is lost on loopback at 1000/s: the device's count
		// covers every data datagram we sent (our FIN aside).
		if tl.Verdict == sweep.VerdictPass && tl.Unreported != 0 {
			t.Errorf("trial %d passed with %d datagrams the device's counts do not cover", i+1, tl.Unreported)
		}
	}
}

// A device whose firmware cannot serve UDP (an lwIP shell) is refused
// before any trial, with the reason.
func TestSweepDUTRefusesLwIP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	sh := `printf 'lwip> '; while read l; do printf '%s\n' "$l"; printf 'lwip> '; done`
	code := run(ctx, []string{"sweep", "127.0.0.1", "--sizes", "100", "--dut", "cmd:" + sh, "--dut-shell", "lwip", "--dut-timeout", "2", "--no-save"}, &out, &errb)
	if code == exitOK || !strings.Contains(errb.String(), "no UDP") || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
