package cpuuse

import (
	"time"

	"golang.org/x/sys/windows"
)

func processTimes() (user, system time.Duration, ok bool) {
	var creation, exit, kernel, usr windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &usr); err != nil {
		return 0, 0, false
	}
	// FILETIME durations count 100 ns ticks.
	ticks := func(f windows.Filetime) time.Duration {
		return time.Duration(int64(f.HighDateTime)<<32|int64(f.LowDateTime)) * 100
	}
	return ticks(usr), ticks(kernel), true
}
