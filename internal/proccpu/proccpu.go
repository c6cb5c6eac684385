// Package proccpu reads what a process has cost in CPU time, from
// /proc/PID/stat on Linux: user plus system time and how long ago the
// process started, so its share of a core since then.
package proccpu

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Usage is the CPU time a process has used (user plus system, all its
// threads) and how long it has existed.
type Usage struct {
	PID int           `json:"pid"`
	CPU time.Duration `json:"cpu_ns"`
	Age time.Duration `json:"age_ns"`
}

// Share is the process's CPU time over its age: the fraction of one core
// it has used on average since it started (0 when its age is unknown).
func (u Usage) Share() float64 {
	if u.Age <= 0 {
		return 0
	}
	return u.CPU.Seconds() / u.Age.Seconds()
}

// String says it in one line: "0.12 s of CPU in 15m0s (0.01 % of a core)".
func (u Usage) String() string {
	return fmt.Sprintf("%.2f s of CPU in %s (%.2f %% of a core)", u.CPU.Seconds(), u.Age.Round(time.Second), 100*u.Share())
}

// ErrNotSupported is Read's error where there is no /proc.
var ErrNotSupported = errors.New("proccpu: reading a process's CPU time needs Linux's /proc")

// userHZ is the unit of /proc/PID/stat's times: USER_HZ, which the kernel
// fixes at 100 for user space on every architecture Go builds for
// (sysconf(_SC_CLK_TCK), which pure Go cannot call).
const userHZ = 100

// parseStat reads utime, stime and starttime from the text of
// /proc/PID/stat and returns the process's usage, its age taken against
// uptime (since boot, /proc/uptime's first figure).
func parseStat(pid int, stat string, uptime time.Duration) (Usage, error) {
	i := strings.LastIndexByte(stat, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return Usage{}, fmt.Errorf("proccpu: /proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return Usage{}, fmt.Errorf("proccpu: /proc/%d/stat: %d fields after the name, want 20 or more", pid, len(f))
	}
	var ticks [3]uint64 // utime (14), stime (15), starttime (22)
	for k, idx := range []int{11, 12, 19} {
		v, err := strconv.ParseUint(f[idx], 10, 64)
		if err != nil {
			return Usage{}, fmt.Errorf("proccpu: /proc/%d/stat field %d: %w", pid, idx+3, err)
		}
		ticks[k] = v
	}
	u := Usage{PID: pid, CPU: ticksDuration(ticks[0] + ticks[1])}
	if start := ticksDuration(ticks[2]); uptime > start {
		u.Age = uptime - start
	}
	return u, nil
}

// ticksDuration converts USER_HZ ticks to a duration.
func ticksDuration(t uint64) time.Duration {
	return time.Duration(t) * (time.Second / userHZ)
}

// parseUptime reads /proc/uptime's first figure (seconds since boot).
func parseUptime(s string) (time.Duration, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, errors.New("proccpu: /proc/uptime is empty")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("proccpu: /proc/uptime %q: not a count of seconds", f[0])
	}
	return time.Duration(v * float64(time.Second)), nil
}
