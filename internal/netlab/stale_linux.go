//go:build linux

package netlab

// Stale namespaces: what a crashed run left behind, told from a live
// run's by the creating process's PID and start time in the name.

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CleanupStale removes every namespace whose name starts with Prefix and
// whose creating process (PID and start time, from the name) is no longer
// running. It returns the names it removed. Namespaces of live processes,
// this one included, are left alone.
func CleanupStale() (removed []string, err error) {
	entries, err := os.ReadDir(nsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("netlab: list namespaces: %w", err)
	}
	var errs []error
	for _, e := range entries {
		pid, start, ok := parseNSName(e.Name())
		if !ok || processAlive(pid, start) {
			continue
		}
		if err := deleteNS(e.Name()); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e.Name())
	}
	return removed, errors.Join(errs...)
}

// processAlive reports whether process pid exists and started at start
// (clock ticks since boot). A different start time means the PID was reused.
func processAlive(pid int, start uint64) bool {
	got, err := procStartTime(pid)
	if err != nil {
		// No /proc entry: dead. Anything else (e.g. /proc unreadable) is
		// treated as alive; never remove what might be in use.
		return !errors.Is(err, os.ErrNotExist)
	}
	return got == start
}

// procStartTime reads field 22 (starttime) of /proc/<pid>/stat.
func procStartTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("netlab: read start time of pid %d: %w", pid, err)
	}
	return parseStatStart(string(b))
}

// parseStatStart extracts starttime from the text of /proc/<pid>/stat. The
// command name (field 2) is in parentheses and may contain spaces or ')', so
// fields are counted from the last ')'.
func parseStatStart(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("netlab: malformed /proc stat: no ')'")
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return 0, fmt.Errorf("netlab: malformed /proc stat: %d fields after comm", len(f))
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("netlab: malformed /proc stat starttime: %w", err)
	}
	return v, nil
}
