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

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/stats"
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
// the kernel (sendfile counts it in this process's rchar), against a real
// iperf 2 server in its own process; without -Z it is not.
func TestZeroCopyUsesSendfile(t *testing.T) {
	const n = 16 << 20
	for _, zc := range []bool{true, false} {
		_, port := startIperfServer(t, false)
		before := procRchar(t)
		r := runShort(t, ClientConfig{Host: "127.0.0.1", Port: port, Bytes: n, ZeroCopy: zc})
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

// TestZeroCopySendEndsOnTime: a -Z send through sendfile to a peer that
// stops reading ends at the test's end like a plain send (the write
// deadline cuts sendfile short), within 200 ms, without an error, and
// counts what the kernel took: exactly what the peer then reads.
func TestZeroCopySendEndsOnTime(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	a := <-accepted
	if a == nil {
		t.Fatal("accept failed")
	}
	defer a.Close()
	_ = d.(*net.TCPConn).SetWriteBuffer(256 << 10)
	_ = a.(*net.TCPConn).SetReadBuffer(256 << 10)
	payload := bytes.Repeat([]byte("0123456789"), 1<<20) // 10 MiB: one write the buffers cannot hold
	end := time.Now().Add(400 * time.Millisecond)
	var c stats.Counters
	res, err := SendTCP(context.Background(), d, true, engine.TCPSendConfig{Buffer: payload, End: end}, &c)
	late := time.Since(end)
	if err != nil {
		t.Fatalf("a -Z send cut short by its end returned %v", err)
	}
	if late < 0 || late > 200*time.Millisecond {
		t.Errorf("the -Z send returned %v after its end (bound 0-200ms)", late)
	}
	if res.Bytes <= 0 || res.Bytes >= int64(len(payload)) {
		t.Errorf("%d bytes of a %d-byte write: want it cut short", res.Bytes, len(payload))
	}
	d.Close()
	got, err := io.Copy(io.Discard, a)
	if err != nil {
		t.Fatal(err)
	}
	if got != res.Bytes || c.Bytes.Load() != res.Bytes {
		t.Errorf("the peer read %d bytes; the sender counted %d (counters %d)", got, res.Bytes, c.Bytes.Load())
	}
	t.Logf("%d bytes taken by the kernel, returned %v after the end", res.Bytes, late)
}
