//go:build !unix && !windows

package cpuuse

import "time"

func processTimes() (user, system time.Duration, ok bool) { return 0, 0, false }
