// Package loopback holds what tests that run real peers on 127.0.0.1
// share: a free-port finder and an output buffer that a child process may
// write while the test reads it. It is for tests only.
package loopback

import (
	"bytes"
	"net"
	"strconv"
	"sync"
	"testing"
)

// Buffer collects output written from other goroutines (a child's stdout
// and stderr, a server's log) and can be read at any time.
type Buffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// FreePort returns a port that was free on 127.0.0.1 for both TCP and UDP
// a moment ago (iperf servers listen on both), failing the test when none
// is found in 50 tries.
func FreePort(t testing.TB) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		uc, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		_ = ln.Close()
		if err == nil {
			_ = uc.Close()
			return port
		}
	}
	t.Fatal("no port free for both TCP and UDP on 127.0.0.1 after 50 tries")
	return 0
}
