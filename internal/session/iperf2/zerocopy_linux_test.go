package iperf2

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/session"
)

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

// TestZeroCopyUsesSendfile: with -Z the payload is read from the file by
// the kernel (sendfile counts it in this process's rchar), against a real
// iperf 2 server in its own process; without -Z it is not.
func TestZeroCopyUsesSendfile(t *testing.T) {
	const n = 16 << 20
	for _, zc := range []bool{true, false} {
		_, port := startIperfServer(t, false)
		before := procRchar(t)
		r := runShort(t, session.ClientConfig{Host: "127.0.0.1", Port: port, Bytes: n, ZeroCopy: zc})
		read := procRchar(t) - before
		if r.Sender == nil || r.Sender.Bytes < n {
			t.Fatalf("zerocopy=%v: sender %+v", zc, r.Sender)
		}
		if zc && read < n {
			t.Errorf("-Z: the process read %d bytes through the kernel while sending %d: no sendfile", read, n)
		}
		if !zc && read >= n {
			t.Errorf("without -Z the process read %d bytes while sending %d", read, n)
		}
	}
}
