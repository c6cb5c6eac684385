package web

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/session"
)

// 50 dashboard viewers follow the event stream while UDP tests run back to
// back: every viewer keeps up and the heap stays bounded. The test runs 15 s;
// WIREBENCH_VIEWERS_SECONDS=60 runs it for a minute (docs/web.md has the
// figures).
func TestFiftyViewersMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 15 s of tests (-short)")
	}
	const viewers = 50
	run := 15 * time.Second
	if v := os.Getenv("WIREBENCH_VIEWERS_SECONDS"); v != "" {
		s, err := strconv.Atoi(v)
		if err != nil || s < 1 || s > 600 {
			t.Fatalf("WIREBENCH_VIEWERS_SECONDS=%q: want 1-600", v)
		}
		run = time.Duration(s) * time.Second
	}
	ts := startTestServer(t, Config{}, 100*time.Millisecond)
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	runtime.GC()
	base := heap()

	ctx, cancel := context.WithTimeout(context.Background(), run+60*time.Second)
	defer cancel()
	var events [viewers]atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < viewers; i++ {
		resp := openEvents(ctx, t, ts.url)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer resp.Body.Close()
			_ = readEvents(resp.Body, func(sseEvent) { events[i].Add(1) })
		}(i)
	}

	// Two UDP tests at a time, 2 s each at 5 Mbit/s, until the time is up.
	end := time.Now().Add(run)
	var tests atomic.Int64
	var load sync.WaitGroup
	for w := 0; w < 2; w++ {
		load.Add(1)
		go func() {
			defer load.Done()
			for n := 0; n < 1000 && time.Now().Add(2*time.Second).Before(end); n++ {
				cfg := session.ClientConfig{Host: "127.0.0.1", Port: ts.port, UDP: true, Duration: 2 * time.Second}
				cfg.Rate.Value = 5e6
				if _, err := dialect.RunClient(ctx, cfg); err != nil {
					t.Errorf("udp test: %v", err)
					return
				}
				tests.Add(1)
			}
		}()
	}
	var peak uint64
	for time.Now().Before(end) {
		time.Sleep(time.Second)
		peak = max(peak, heap())
	}
	load.Wait()
	time.Sleep(500 * time.Millisecond) // the last results reach the viewers
	st := ts.web.Hub().Stats()
	runtime.GC()
	after := heap()
	cancel()
	wg.Wait()

	var least int64 = -1
	for i := range events {
		if n := events[i].Load(); least < 0 || n < least {
			least = n
		}
	}
	t.Logf("%d viewers, %v, %d UDP tests: heap %.1f MiB before, peak %.1f MiB, %.1f MiB after GC; fewest events seen by a viewer %d; hub %+v",
		viewers, run, tests.Load(), mib(base), mib(peak), mib(after), least, st)
	if st.Viewers != viewers || st.DroppedViewers != 0 {
		t.Errorf("hub %+v: want %d viewers connected, none dropped", st, viewers)
	}
	// Each test gives a start, an end and ~20 intervals of 100 ms.
	if want := 10 * tests.Load(); least < want {
		t.Errorf("a viewer saw %d events of %d tests, want at least %d", least, tests.Load(), want)
	}
	if tests.Load() < 2 {
		t.Errorf("only %d tests ran", tests.Load())
	}
	// Bounded: the live state is per test in progress, the viewers'
	// buffers are fixed, the history is capped. 32 MiB is far above what
	// this holds and far below a leak of the events sent.
	if after > base+32<<20 || peak > base+64<<20 {
		t.Errorf("heap grew from %.1f MiB to %.1f MiB after GC (peak %.1f MiB)", mib(base), mib(after), mib(peak))
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
