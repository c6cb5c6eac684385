//go:build linux

package proccpu

import (
	"fmt"
	"os"
)

// Read returns what process pid has used so far.
func Read(pid int) (Usage, error) {
	up, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return Usage{}, fmt.Errorf("proccpu: %w", err)
	}
	uptime, err := parseUptime(string(up))
	if err != nil {
		return Usage{}, err
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("proccpu: %w", err)
	}
	return parseStat(pid, string(b), uptime)
}
