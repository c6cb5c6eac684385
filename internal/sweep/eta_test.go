package sweep_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/testutil/trialtrace"
)

// TestRecordTrace records a real sweep's trials for the time-left tests:
// it runs only when WIREBENCH_RECORD_TRACE names the file to write and
// WIREBENCH_RECORD_PORT the loopback port of a running reflector
// (wirebench reflect --model ...); WIREBENCH_RECORD_ARGS are the sizes and
// medium as "SIZES MEDIUM" (default "rfc2544 eth100").
func TestRecordTrace(t *testing.T) {
	path, port := os.Getenv("WIREBENCH_RECORD_TRACE"), os.Getenv("WIREBENCH_RECORD_PORT")
	if path == "" || port == "" {
		t.Skip("records a trace only when WIREBENCH_RECORD_TRACE and WIREBENCH_RECORD_PORT are set")
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	o := sweep.Options{Port: p, Sizes: "rfc2544", Mode: sweep.ModeReflect, Loss: "0", Trial: "1s", Confirm: "10s", Medium: "eth100", Repeat: 1}
	if a := os.Getenv("WIREBENCH_RECORD_SIZES"); a != "" {
		o.Sizes = a
	}
	if m := os.Getenv("WIREBENCH_RECORD_MEDIUM"); m != "" {
		o.Medium = m
	}
	s, err := o.Setup("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	rec := trialtrace.NewRecorder("wirebench sweep 127.0.0.1 --mode reflect --sizes "+o.Sizes+" --medium "+o.Medium+" against wirebench reflect --model "+os.Getenv("WIREBENCH_RECORD_MODEL"), s.Runner)
	s.Config.OnTrial = func(p sweep.Progress) { t.Log(p.Line()) }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	res := sweep.NewResult(s.Test)
	if err := sweep.Run(ctx, s.Config, rec, res); err != nil {
		t.Fatal(err)
	}
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}
}

// recorded are the sweeps recorded against a reflector on loopback (see
// TestRecordTrace), with the options they ran with and the share of the
// estimates from a quarter of the way in that must be within 35 % of the
// time really left. Not all: in a sweep, work appears that nothing before
// it shows, and no estimate that rises at most 2× per update can follow it
// at once. Both were recorded again for the multi-rate search (December
// 2026, on the 2-core host at a load average of 14 to 39, three
// recordings and other engineers' work at once). In the buffer recording
// the cliff between 1234 and 1472 B, bisected over 8 sizes that take 56 %
// of the run, shows only when 1472 B's search ends, 44 % of the way in
// (163 s of 375 s), and a search takes 3 to 14 trials as its size lies
// at, below or on the cliff. In the 10mbit recording the host's stalls
// kept every search but the first from converging within its 14 trials,
// and cliffs into 50 and 722 B were bisected (15 searches in 757 s). The
// estimate before internal/eta was within the bound less often on both
// (10 % and 14 %), and with the plain mean of the searches done in place
// of eta's recency-weighted one 23 % and 27 %; with it, 31 % and 61 %.
// Two terms took the buffer recording to 73 %: the cliff under the size
// being searched counts from the first trial that delivered too little
// (1472 B's first, at 105 s, not its search's end at 163 s), and a size
// bisecting a cliff is expected to search like one of the cliff's ends,
// half the time each (3 trials at the highest rate, 7 to 14 below it).
// Its estimate still reads about 0.55× until 175 s: the bisection is
// counted as going on as often as sizes were not host-limited (4 of its
// 8 steps expected, with 3 sizes done), and all 8 did. In the 10mbit
// recording every search ran its 14 trials but took 20 to 100 s as the
// mix of 1, 3.2 and 10 s trials and the host's stalls fell, with nothing
// before a search that tells which, and the bisections stopped after 5 of
// 6 and 2 of 9 steps at sizes this host could not send, more often than
// the share of host-limited sizes before them foretold: no term of the
// run's structure foresees either, and its share stayed 31 %. Two
// terms took it to 36 % and the buffer recording to 75 %: a host
// stall's re-runs are left out of what a search takes and added as the
// share of the searches' time they took in the run (one search a stall
// drew out no longer sets every later one's length), and the cliffs that
// sizes finding no rate at all will make (its 82, 210, 978 and 1234 B
// found none at 0 % loss, and 18-82 and 466-978 were bisected) are
// counted before they show, as often as the sizes done found none. Every
// estimate of both keeps to the 2× rule. The shares asserted are what the
// estimator reaches today, a little rounded down: a floor against making
// it worse, not a claim of the ±35 % bound.
var recorded = []struct {
	file     string
	opts     sweep.Options
	within   float64
	beatsOld bool // within the bound more often than the estimate before internal/eta
}{
	{"sweep-eth100-10mbit.json", sweep.Options{Sizes: "rfc2544", Mode: sweep.ModeReflect, Loss: "0", Trial: "1s", Confirm: "10s", Medium: "eth100", Repeat: 1}, 0.33, true},
	{"sweep-eth100-buffer.json", sweep.Options{Sizes: "466,978,1234,1472", Mode: sweep.ModeReflect, Loss: "0", Trial: "1s", Confirm: "10s", Medium: "eth100", Repeat: 1}, 0.72, true},
}

// replay runs the sweep recorded in file again, its trials answered from
// the recording on its clock, and returns its progress updates: the
// estimate each showed (left, when given; otherwise the Line's) and the
// time the recorded run really had left.
func replay(t *testing.T, file string, o sweep.Options, left func(sweep.Progress) time.Duration) ([]trialtrace.Point, time.Duration) {
	t.Helper()
	tr, err := trialtrace.Load(filepath.Join("testdata", "eta", file))
	if err != nil {
		t.Fatal(err)
	}
	o.Port = 5001
	s, err := o.Setup("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	rp := trialtrace.NewReplay(tr)
	s.Config.Sleep, s.Config.Now = rp.Sleep, rp.Now
	var ps []trialtrace.Point
	s.Config.OnTrial = func(p sweep.Progress) {
		ps = append(ps, trialtrace.Point{Elapsed: rp.Elapsed(), Estimate: left(p), Actual: rp.Left()})
	}
	if err := sweep.Run(context.Background(), s.Config, rp, sweep.NewResult(s.Test)); err != nil {
		t.Fatalf("replaying %s: %v", file, err)
	}
	if !rp.Done() {
		t.Fatalf("replaying %s: the sweep ended before every recorded trial", file)
	}
	return ps, time.Duration(tr.EndS * float64(time.Second))
}

// legacyETA is the estimate the progress line gave before internal/eta:
// the time so far per finished search, times the searches left.
func legacyETA(p sweep.Progress) time.Duration {
	if p.Done == 0 || p.Planned <= p.Done {
		return 0
	}
	return time.Duration(float64(p.Elapsed) / float64(p.Done) * float64(p.Planned-p.Done))
}

// TestTimeLeftHolds replays recorded sweeps: no estimate of the time left
// rises more than 2× over the one before, and from a quarter of the way in
// at least the recording's share of them (see recorded) is within 35 % of
// what really was left (where said, a larger share than the estimate the
// line gave before internal/eta, which breaks the bound on the same
// recordings).
func TestTimeLeftHolds(t *testing.T) {
	for _, r := range recorded {
		t.Run(r.file, func(t *testing.T) {
			ps, total := replay(t, r.file, r.opts, sweep.Progress.ETA)
			for _, p := range ps {
				t.Logf("at %6.1fs: estimated %6.1fs left, really %6.1fs", p.Elapsed.Seconds(), p.Estimate.Seconds(), p.Actual.Seconds())
			}
			v := trialtrace.Check(ps, total, 0.25, 0.35, 2)
			for _, b := range v.Rises {
				t.Error(b)
			}
			for _, b := range v.Misses {
				t.Log("off: " + b)
			}
			old, _ := replay(t, r.file, r.opts, legacyETA)
			was := trialtrace.Check(old, total, 0.25, 0.35, 2)
			t.Logf("within 35 %% from a quarter in: %.0f %% of %d estimates (before internal/eta: %.0f %%, and %d rose more than 2×)",
				100*v.Within(), v.Judged, 100*was.Within(), len(was.Rises))
			if v.Within() < r.within {
				t.Errorf("%.0f %% of the estimates within 35 %%, want at least %.0f %%", 100*v.Within(), 100*r.within)
			}
			if len(was.Misses)+len(was.Rises) == 0 {
				t.Error("the estimate before internal/eta holds on this recording too: it cannot tell the two apart")
			}
			if r.beatsOld && v.Within() <= was.Within() {
				t.Errorf("%.0f %% of the estimates within 35 %%, no more than before internal/eta (%.0f %%)", 100*v.Within(), 100*was.Within())
			}
		})
	}
}
