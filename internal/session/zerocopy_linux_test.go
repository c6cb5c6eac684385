package session

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/stats"
)

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
