//go:build !linux

package priority

import (
	"os"
	"time"
)

// pacerSys does nothing on this system.
type pacerSys struct{}

// realTime cannot give a thread real time here.
func realTime() (pacerSys, error) { return pacerSys{}, ErrUnsupported }

func (pacerSys) normal()                  {}
func (pacerSys) threadCPU() time.Duration { return 0 }
func lockMemory([]byte) bool              { return false }
func unlockMemory([]byte)                 {}

// disabled says the user asked for senders at normal priority.
func disabled() bool { return os.Getenv("WIREBENCH_REALTIME") == "0" }
