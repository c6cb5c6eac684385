//go:build !linux

package pacer

import "time"

// preciseLimit is 0: other systems sleep with Go timers only.
const preciseLimit = 0

func preciseSleep(d time.Duration) { time.Sleep(d) }

// heldSleep is preciseSleep here.
func heldSleep(d time.Duration) { time.Sleep(d) }

// TuneThread does nothing on this system.
func TuneThread() {}
