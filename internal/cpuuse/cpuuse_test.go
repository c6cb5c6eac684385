package cpuuse

import (
	"runtime"
	"testing"
	"time"
)

func TestBusyLoopShows(t *testing.T) {
	a := Now()
	if !a.OK {
		t.Skipf("no process CPU times on %s", runtime.GOOS)
	}
	// Spin until the process has used 50 ms of CPU (bounded at 5 s).
	var x uint64
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
		for i := 0; i < 1e6; i++ {
			x += uint64(i) * x
		}
		if s := Now(); s.User+s.System-a.User-a.System >= 50*time.Millisecond {
			break
		}
	}
	u, ok := Between(a, Now())
	if !ok {
		t.Fatal("Between not ok")
	}
	total, user, system := u.Percent()
	if u.User+u.System < 50*time.Millisecond || total <= 0 || user+system != total {
		t.Errorf("usage %+v, percent %.1f (%.1f u, %.1f s) after spinning (x=%d)", u, total, user, system, x)
	}
}

func TestBetweenRejects(t *testing.T) {
	now := time.Now()
	a := Sample{At: now, User: time.Second, OK: true}
	if _, ok := Between(a, Sample{At: now.Add(time.Second)}); ok {
		t.Error("a sample that is not OK gave a usage")
	}
	if _, ok := Between(a, a); ok {
		t.Error("no time passed but a usage came")
	}
	u, _ := Between(a, Sample{At: now.Add(2 * time.Second), User: 2 * time.Second, System: time.Second, OK: true})
	if total, user, sys := u.Percent(); total != 100 || user != 50 || sys != 50 {
		t.Errorf("percent = %v %v %v, want 100 50 50", total, user, sys)
	}
}
