package sockopt

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// kernelDoubles: Linux reports twice the buffer size it granted (socket(7)).
const kernelDoubles = true

func setCongestion(fd uintptr, algo string) error {
	return unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, algo)
}

// sysctlMax reads net.core.rmem_max or wmem_max.
func sysctlMax(name string) (int, bool) {
	b, err := os.ReadFile("/proc/sys/net/core/" + name)
	if err != nil {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return v, err == nil
}
