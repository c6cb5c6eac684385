package iperf3

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/session"
)

// TestZeroCopyIperf3Reverse: our iperf3 server sends with sendfile when the
// client asks for zerocopy (-R -Z): in one process, the run with -Z reads
// the payload once more (from the file) than the run without.
func TestZeroCopyIperf3Reverse(t *testing.T) {
	const n = 16 << 20
	ts := startI3Server(t, session.ServerConfig{}, Config{})
	var read [2]int64
	for i, zc := range []bool{true, false} {
		before := procRchar(t)
		runShort(t, session.ClientConfig{Host: "127.0.0.1", Port: ts.i3port, Dialect: session.DialectIperf3, Reverse: true,
			Bytes: n, ZeroCopy: zc})
		read[i] = procRchar(t) - before
	}
	if read[0]-read[1] < n*9/10 {
		t.Errorf("-R -Z read %d bytes, -R %d: the server did not send from the file", read[0], read[1])
	}
}

// procRchar is this process's rchar from /proc/self/io: bytes read by
// read-like system calls, sendfile's reads from the file included.
func procRchar(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("/proc/self/io not readable: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}
