package rfc2544_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/rfc2544"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/testutil/trialtrace"
)

// TestRecordTrace records a real RFC 2544 run's trials for the time-left
// tests: it runs only when WIREBENCH_RECORD_TRACE names the file to write
// and WIREBENCH_RECORD_PORT the loopback port of a running reflector
// (wirebench reflect --model ...), as the rfc2544 command with --mode
// reflect and its defaults would (WIREBENCH_RECORD_MEDIUM, default eth100);
// WIREBENCH_RECORD_JSON, when set, names a file for the run's document.
func TestRecordTrace(t *testing.T) {
	path, port := os.Getenv("WIREBENCH_RECORD_TRACE"), os.Getenv("WIREBENCH_RECORD_PORT")
	if path == "" || port == "" {
		t.Skip("records a trace only when WIREBENCH_RECORD_TRACE and WIREBENCH_RECORD_PORT are set")
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	o := rfc2544.Options{Port: p, Mode: sweep.ModeReflect, Sizes: "rfc2544", Tests: strings.Join(rfc2544.Tests, ","), Medium: "eth100", PDR: "0.5%", Loads: "10,50,90,100", MaxBurst: 100000}
	if m := os.Getenv("WIREBENCH_RECORD_MEDIUM"); m != "" {
		o.Medium = m
	}
	s, err := o.Setup("127.0.0.1", func(string, bool) (bool, string) { return false, "" })
	if err != nil {
		t.Fatal(err)
	}
	rec := trialtrace.NewRecorder("wirebench rfc2544 127.0.0.1 --mode reflect --medium "+o.Medium+" against wirebench reflect --model "+os.Getenv("WIREBENCH_RECORD_MODEL"), s.Runner)
	s.Config.OnProgress = func(p rfc2544.Progress) { t.Log(p.Line()) }
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	res := rfc2544.NewResult(s.Test)
	if err := rfc2544.Run(ctx, s.Config, rec, res); err != nil {
		t.Fatal(err)
	}
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}
	if j := os.Getenv("WIREBENCH_RECORD_JSON"); j != "" {
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(j, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// recorded are the runs recorded against a reflector on loopback (see
// TestRecordTrace), with the options they ran with and the share of the
// estimates from a quarter of the way in that must be within 35 % of the
// time really left: what the estimator reaches today, a little rounded
// down, a floor against making it worse. The schedule is the one the run
// was recorded with, which the replay must ask again to get the same
// trials. Recordings the product has since changed the course of no
// longer replay and are gone: one made at a load average of 8.5 to 39
// (every estimate held; at 210 B, once "no NDR", this host spoiled every
// confirmation, and the size now takes its best rate as a lower bound and
// measures the latency at it), one of the schedule before the command
// shortened a reflector's waits (71 %: its 82 B search took 56 s where
// the others took 21 to 33), and one beside two busy loops whose 18 B and
// 1234 B searches ran trials the judge once called our stall, just above
// the far end's rate (sweep.StallJudge now sees the far end's own rate
// overflow its queue there).
var recorded = []struct {
	file     string
	opts     rfc2544.Options
	schedule result.RFC2544Schedule
	within   float64
}{
	// The default schedule as the command runs it today (a reflector
	// trial listens until its answers stop, trials 50 ms apart), recorded
	// 7 December 2026 on the 2-core host: quiet (243 s, load average 1.0
	// falling to 0.6) and beside two busy loops (302 s, load 3.1 to 3.5),
	// the conditions the issue names. Every estimate holds on the quiet
	// one since a class's overhead follows its latest units (eta's
	// overKeep); 99 % before: the two that missed were the last 2 s (0.8 s
	// estimated, 2.0 s left: back-to-back bursts that lost a frame wait
	// their whole 0.5 s for it, those that lost none 50 ms, and the last
	// sizes' bursts lose more often). On the busy one every estimate holds
	// since the search's structure counts what its rate rule runs
	// (mlrsearch's State.Left): the one that missed, 4 min 26 s in, came
	// right after a 5 s confirmation of 1472 B's search that this host
	// stalled, which the structure counted as a new bisection of three 5 s
	// trials (50 s estimated, 36 s left) where the search measures the
	// shorter phase's pass again, once.
	{"rfc2544-quiet.json", rfc2544.Options{Mode: sweep.ModeReflect, Sizes: "rfc2544", Tests: strings.Join(rfc2544.Tests, ","), Medium: "eth100", PDR: "0.5%", Loads: "10,50,90,100", MaxBurst: 100000},
		rfc2544.DefaultSchedule(), 1},
	{"rfc2544-busy2.json", rfc2544.Options{Mode: sweep.ModeReflect, Sizes: "rfc2544", Tests: strings.Join(rfc2544.Tests, ","), Medium: "eth100", PDR: "0.5%", Loads: "10,50,90,100", MaxBurst: 100000},
		rfc2544.DefaultSchedule(), 1},
	// Beside two busy loops again, the same day (262 s, with the judge
	// that sees the far end's own rate overflow its queue): this host
	// spoiled 10 throughput trials, most at the small sizes. 93 % held
	// while every trial so far weighed alike in a class's overhead and
	// share of re-runs; 98 % since the latest units weigh more (eta's
	// overKeep, rerunKeep). The four that miss are the last 2 s: the last
	// size's bursts lost a frame more often than any before and were
	// sent again where this host slowed them (0 to 1 s estimated, 2 s
	// left).
	{"rfc2544-busy3.json", rfc2544.Options{Mode: sweep.ModeReflect, Sizes: "rfc2544", Tests: strings.Join(rfc2544.Tests, ","), Medium: "eth100", PDR: "0.5%", Loads: "10,50,90,100", MaxBurst: 100000},
		rfc2544.DefaultSchedule(), 0.97},
}

// replay runs the RFC 2544 run recorded in file again, its trials answered
// from the recording on its clock, and returns its progress updates: the
// estimate each showed (left) and the time the recorded run really had
// left.
func replay(t *testing.T, file string, o rfc2544.Options, sched result.RFC2544Schedule, left func(rfc2544.Progress) time.Duration) ([]trialtrace.Point, time.Duration) {
	t.Helper()
	tr, err := trialtrace.Load(filepath.Join("testdata", "eta", file))
	if err != nil {
		t.Fatal(err)
	}
	o.Port = 5001
	s, err := o.Setup("127.0.0.1", func(string, bool) (bool, string) { return false, "" })
	if err != nil {
		t.Fatal(err)
	}
	s.Config.Schedule = sched
	rp := trialtrace.NewReplay(tr)
	s.Config.Sleep, s.Config.Now = rp.Sleep, rp.Now
	var ps []trialtrace.Point
	s.Config.OnProgress = func(p rfc2544.Progress) {
		ps = append(ps, trialtrace.Point{Elapsed: rp.Elapsed(), Estimate: left(p), Actual: rp.Left()})
	}
	if err := rfc2544.Run(context.Background(), s.Config, rp, rfc2544.NewResult(s.Test)); err != nil {
		t.Fatalf("replaying %s: %v", file, err)
	}
	if !rp.Done() {
		t.Fatalf("replaying %s: the run ended before every recorded trial", file)
	}
	return ps, time.Duration(tr.EndS * float64(time.Second))
}

// legacy is the estimate the progress line gave before internal/eta: a
// fixed schedule per test and size (nine search trials and the
// confirmation; every latency trial; five loss steps; fourteen bursts),
// scaled by how the finished tests kept to it.
type legacy struct {
	cfg     rfc2544.Config
	planned time.Duration
	spent   time.Duration
	test    string
	size    int
}

func (l *legacy) estimate(test string) time.Duration {
	s, gap := l.cfg.Schedule, 200*time.Millisecond
	switch test {
	case result.RFC2544TestThroughput:
		return 9*(s.Search+gap) + s.Confirm + gap
	case result.RFC2544TestLatency:
		return time.Duration(4*max(s.LatencyRepeats, 1)) * (s.Latency + gap)
	case result.RFC2544TestLoss:
		return 5 * (s.Loss + gap)
	case result.RFC2544TestBackToBack:
		return time.Duration(max(s.BurstRepeats, 1)) * 14 * (gap + 300*time.Millisecond)
	}
	return 0
}

// left follows the run from its progress: a test or size that changes
// finished the one before.
func (l *legacy) left(p rfc2544.Progress) time.Duration {
	if l.test != "" && (p.Test != l.test || p.Size != l.size) {
		l.spent += l.estimate(l.test)
	}
	l.test, l.size = p.Test, p.Size
	left := l.planned - l.spent
	if l.spent > 0 {
		left = time.Duration(float64(left) * float64(p.Elapsed) / float64(l.spent))
	}
	return max(left, 0)
}

// TestTimeLeftHolds replays recorded runs: no estimate of the time left
// rises more than 2× over the one before, and from a quarter of the way in
// at least the recording's share of them (see recorded) is within 35 % of
// what really was left, a larger share than the estimate the line gave
// before internal/eta, which breaks the bound on the same recording.
func TestTimeLeftHolds(t *testing.T) {
	for _, r := range recorded {
		t.Run(r.file, func(t *testing.T) {
			ps, total := replay(t, r.file, r.opts, r.schedule, func(p rfc2544.Progress) time.Duration { return p.Left })
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
			o := r.opts
			o.Port = 5001
			s, err := o.Setup("127.0.0.1", func(string, bool) (bool, string) { return false, "" })
			if err != nil {
				t.Fatal(err)
			}
			l := &legacy{cfg: s.Config}
			l.cfg.Schedule = r.schedule
			sizes := map[int]bool{}
			for _, z := range s.Config.Sizes {
				sizes[z] = true
			}
			for _, test := range rfc2544.Tests {
				l.planned += time.Duration(len(sizes)) * l.estimate(test)
			}
			old, _ := replay(t, r.file, r.opts, r.schedule, l.left)
			was := trialtrace.Check(old, total, 0.25, 0.35, 2)
			t.Logf("within 35 %% from a quarter in: %.0f %% of %d estimates, %d rose more than 2× (before internal/eta: %.0f %%, %d rose more than 2×)",
				100*v.Within(), v.Judged, len(v.Rises), 100*was.Within(), len(was.Rises))
			if len(was.Misses)+len(was.Rises) == 0 {
				t.Error("the estimate before internal/eta holds on this recording too: it cannot tell the two apart")
			}
			if v.Within() < r.within {
				t.Errorf("%.0f %% of the estimates within 35 %%, want at least %.0f %%", 100*v.Within(), 100*r.within)
			}
			if v.Within() <= was.Within() {
				t.Errorf("%.0f %% of the estimates within 35 %%, no more than before internal/eta (%.0f %%)", 100*v.Within(), 100*was.Within())
			}
		})
	}
}
