// Package loopback holds what tests that run real peers on 127.0.0.1
// share: a free-port finder and an output buffer that a child process may
// write while the test reads it. It is for tests only.
package loopback

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
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
//
// Where the system says which ports it hands out by itself (Linux:
// ip_local_port_range), the port is picked at random below that range. A
// port from the range can be given, between FreePort's check and the
// caller's bind, to any socket that connects or binds port 0: a test
// running in parallel, or another program on a shared machine. The
// caller's bind then fails ("address already in use"), or its client
// talks to another program's listener. Elsewhere the kernel picks.
func FreePort(t testing.TB) int {
	t.Helper()
	if lo, hi, ok := quietPorts(); ok {
		for range 50 {
			if port := lo + rand.IntN(hi-lo); free(port) {
				return port
			}
		}
	}
	for range 50 {
		port, err := kernelPort()
		if err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		if port > 0 {
			return port
		}
	}
	t.Fatal("no port free for both TCP and UDP on 127.0.0.1 after 50 tries")
	return 0
}

// free says whether port can be bound on 127.0.0.1 for TCP and UDP. The
// TCP bind is a client's (no SO_REUSEADDR, where strictBind can say so):
// tests give FreePort's ports to clients too (--cport), which must not
// land on a port an earlier test's connection still holds in TIME_WAIT.
//
// The probe sockets are open only while no process can be forked (see
// NoFork): a child forked meanwhile would hold them until it execs, and
// the caller's bind to the port, a moment after free returned, failed
// "address already in use" on a probe listener that lived on in a test's
// `ss` or iperf3 child.
func free(port int) bool {
	defer NoFork()()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	lc := net.ListenConfig{Control: strictBind}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return false
	}
	defer ln.Close()
	uc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return false
	}
	_ = uc.Close()
	return true
}

// kernelPort asks the kernel for a TCP port that is also free for UDP,
// returning 0 when the UDP bind failed; its probes, too, are open only
// while no process can be forked.
func kernelPort() (int, error) {
	defer NoFork()()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	uc, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return 0, nil
	}
	_ = uc.Close()
	return port, nil
}

// quietFloor is the lowest port FreePort picks by itself: above the ports
// services commonly use.
const quietFloor = 10000

// ephemeralRangeFile holds the range of ports Linux hands out by itself.
const ephemeralRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// quietPorts is the range [lo, hi) of ports no socket gets without asking
// for it by number: from quietFloor to the start of the system's ephemeral
// range. ok is false where that range is unknown or leaves fewer than 1000
// ports.
func quietPorts() (lo, hi int, ok bool) {
	b, err := os.ReadFile(ephemeralRangeFile)
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, false
	}
	first, err := strconv.Atoi(f[0])
	if err != nil || first-quietFloor < 1000 {
		return 0, 0, false
	}
	return quietFloor, first, true
}
