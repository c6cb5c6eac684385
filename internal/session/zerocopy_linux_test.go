package session

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
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

// TestZeroCopySendsThePayload: the bytes that arrive are the payload, write
// after write, and a write of anything else is refused.
func TestZeroCopySendsThePayload(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	zc, done, err := newZeroCopy(c, payload)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	for _, b := range [][]byte{payload, payload[:10], payload} {
		if n, err := zc.Write(b); n != len(b) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if _, err := zc.Write([]byte("0123")); err == nil {
		t.Error("a write that is not the payload was accepted")
	}
	c.(*net.TCPConn).CloseWrite()
	want := append(append(append([]byte{}, payload...), payload[:10]...), payload...)
	select {
	case b := <-got:
		if !bytes.Equal(b, want) {
			t.Errorf("received %q, want %q", b, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("receiver did not finish")
	}
	c.Close()
}

// TestZeroCopyUsesSendfile: with -Z the payload is read from the file by
// the kernel (sendfile counts it in rchar), against a real iperf3 server
// in its own process; without -Z it is not.
func TestZeroCopyUsesSendfile(t *testing.T) {
	const n = 16 << 20
	for _, zc := range []bool{true, false} {
		port, wait := realIperf3Server(t)
		before := procRchar(t)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		r, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Dialect: DialectIperf3, Bytes: n, ZeroCopy: zc})
		cancel()
		if err != nil || r.Error != "" {
			t.Fatalf("zerocopy=%v: %v %s", zc, err, r.Error)
		}
		read := procRchar(t) - before
		rep := wait()
		if got := sumReceivedBytes(rep); got < n {
			t.Errorf("zerocopy=%v: iperf3 received %d bytes, want %d", zc, got, n)
		}
		if zc && read < n {
			t.Errorf("-Z: the process read %d bytes through the kernel while sending %d: no sendfile", read, n)
		}
		if !zc && read >= n {
			t.Errorf("without -Z the process read %d bytes while sending %d", read, n)
		}
	}
}
