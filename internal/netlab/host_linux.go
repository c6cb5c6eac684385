//go:build linux

package netlab

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// Do runs fn on a locked OS thread inside the host's namespace and returns
// its error. Sockets fn creates belong to the namespace for their whole life
// and may be used from any goroutine afterwards: this is how tests open
// listeners and dialers in a lab. Goroutines fn starts do not run in the
// namespace. The calling goroutine's thread is never moved: fn runs on a
// goroutine of its own, which, if the thread cannot be moved back to its
// original namespace, exits still locked so that the runtime discards the
// thread. A panic in fn is re-raised in the caller.
func (h *Host) Do(fn func() error) error {
	type result struct {
		err   error
		panic any
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("netlab: get current namespace: %w", err)}
			return
		}
		defer orig.Close()
		if err := netns.Set(h.sys.ns); err != nil {
			if rerr := netns.Set(orig); rerr == nil {
				runtime.UnlockOSThread()
			}
			ch <- result{err: fmt.Errorf("netlab: enter namespace %s: %w", h.Name, err)}
			return
		}
		var r result
		func() {
			defer func() { r.panic = recover() }()
			r.err = fn()
		}()
		if err := netns.Set(orig); err != nil {
			r.err = errors.Join(r.err, fmt.Errorf("netlab: leave namespace %s: %w", h.Name, err))
			ch <- r // thread stays locked and dies with this goroutine
			return
		}
		runtime.UnlockOSThread()
		ch <- r
	}()
	r := <-ch
	if r.panic != nil {
		panic(r.panic)
	}
	return r.err
}
