package cli

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// TestClientSaysWhenIDsWrapBeforeTheTest: a raw UDP test whose stream
// sends more than 2^31 datagrams (-n 200G at 64 bytes) says once, on
// stderr and before the test, from which datagram its 32-bit ids pass
// 2^31 and what to do. Nothing listens on the port, so the test itself
// ends as refused within about a second.
func TestClientSaysWhenIDsWrapBeforeTheTest(t *testing.T) {
	port := strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"client", "127.0.0.1", "-p", port, "--dialect", "raw", "-u", "-l", "64", "-b", "1000pps",
		"-n", "200G", "--no-save"}, &out, &errOut)
	stderr := errOut.String()
	notice := "from datagram 2,147,483,648 (after about 596h31m"
	if strings.Count(stderr, notice) != 1 || !strings.Contains(stderr, "For 64-bit ids use the iperf2 dialect") {
		t.Fatalf("exit %d; stderr %q, want the notice once", code, stderr)
	}
	if i, j := strings.Index(stderr, notice), strings.Index(stderr, "test ended early"); j >= 0 && j < i {
		t.Errorf("the notice came after the test's end: %q", stderr)
	}
}
