package priority

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"testing"
)

// restore puts every thread back to nice 0 (as root) after a test.
func restore(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		tids, _ := threads()
		for _, tid := range tids {
			_ = setNice(tid, 0)
		}
	})
}

// TestRaiseEveryThread: as root, Raise puts every thread of the process at
// the asked value, and threads made afterwards inherit it.
func TestRaiseEveryThread(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("lowering a nice value needs root (or CAP_SYS_NICE); scripts/test runs as root in CI")
	}
	restore(t)
	o := Raise(-5)
	if !o.Raised || o.Err != nil || o.Nice != -5 {
		t.Fatalf("Raise(-5) = %+v", o)
	}
	// New threads: goroutines locked to threads of their own while others
	// block make the runtime start more.
	var wg sync.WaitGroup
	hold := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			<-hold
		}()
	}
	tids, err := threads()
	if err != nil {
		t.Fatal(err)
	}
	for _, tid := range tids {
		if n, err := threadNice(tid); err == nil && n != -5 {
			t.Errorf("thread %d at nice %d, want -5", tid, n)
		}
	}
	close(hold)
	wg.Wait()
	if again := Raise(-5); !again.Raised || again.Nice != -5 {
		t.Errorf("a second Raise(-5) = %+v", again)
	}
}

// TestRaiseNotPermitted: without the right, Raise says so and changes
// nothing.
func TestRaiseNotPermitted(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may lower a nice value; this is the unprivileged case")
	}
	before, _ := threadNice(os.Getpid())
	o := Raise(before - 1)
	if o.Raised || !errors.Is(o.Err, ErrNotPermitted) {
		t.Fatalf("Raise(%d) as a user = %+v, want ErrNotPermitted", before-1, o)
	}
	if after, _ := threadNice(os.Getpid()); after != before {
		t.Errorf("nice went from %d to %d", before, after)
	}
}
