package session

import (
	"fmt"
	"net/netip"
	"runtime/debug"
	"sync/atomic"
)

// Defence in depth (issue 15): whatever arrives on the wire, a bug it
// triggers in the code of one connection or test must end that test, not
// the process. Every goroutine the server starts per connection or test
// recovers a panic, logs it with its stack, and lets the others carry on.

// logPanic logs a recovered panic v, with the stack of the goroutine that
// panicked; what names the connection or test.
func (s *Server) logPanic(what string, v any) {
	s.logs.log("panic", fmt.Sprintf("%s: internal error, the test is ended (panic: %v); the server carries on\n%s", what, v, debug.Stack()))
}

// recoverPanic, deferred first thing in a goroutine, turns a panic in it
// into a log line.
func (s *Server) recoverPanic(what string) {
	if v := recover(); v != nil {
		s.logPanic(what, v)
	}
}

// catch runs f and turns a panic in it into a logged error, so the test f
// belongs to ends with that error in its result.
func (s *Server) catch(what string, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.logPanic(what, v)
			err = fmt.Errorf("internal error: %v", v)
		}
	}()
	return f()
}

// goTest runs f on a goroutine the server waits for, recovering a panic.
func (s *Server) goTest(what string, f func()) {
	s.wg.Add(1)
	s.running.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.running.Add(-1)
		defer s.recoverPanic(what)
		f()
	}()
}

// testHook, when set (by tests only), is called at the named points of a
// test's life with the peer's address; it injects panics to prove they
// stay inside one test.
var testHook atomic.Pointer[func(point string, peer netip.AddrPort)]

// Hook calls testHook, if set.
func Hook(point string, peer netip.AddrPort) {
	if f := testHook.Load(); f != nil {
		(*f)(point, peer)
	}
}
