//go:build !linux

package engine

import "time"

// runDelayClock would read a thread's run delay; only Linux keeps one.
type runDelayClock struct{}

func openRunDelay() (*runDelayClock, bool)           { return nil, false }
func (r *runDelayClock) read() (time.Duration, bool) { return 0, false }
func (r *runDelayClock) close()                      {}
