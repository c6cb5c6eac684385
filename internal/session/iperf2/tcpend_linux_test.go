package iperf2

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sockopt"
)

// TestIperf2ClientStalledPeerEndsOnTime: our iperf2 TCP client sending to a
// peer that accepts and then stops reading ends its writes with the test's
// clock (the sender's seconds are the duration, within 200 ms, not however
// long a blocked write would have waited), reports no error, and counts as
// written exactly what the peer's kernel took: the bytes the peer reads
// once the client is done.
func TestIperf2ClientStalledPeerEndsOnTime(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		_ = c.(*net.TCPConn).SetReadBuffer(128 << 10)
		accepted <- c
	}()
	const d = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := session.ClientConfig{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, Dialect: session.DialectIperf2, Duration: d, Socket: sockopt.Options{Buffer: 128 << 10}}
	r, err := runClient(ctx, cfg)
	if err != nil {
		t.Fatalf("RunClient: %v", err)
	}
	c := <-accepted
	if c == nil {
		t.Fatal("accept failed")
	}
	defer c.Close()
	read, err := io.Copy(io.Discard, c) // the client closed: what its kernel took arrives
	if err != nil {
		t.Fatal(err)
	}
	if r.Error != "" || r.Sender == nil {
		t.Fatalf("error %q, sender %+v", r.Error, r.Sender)
	}
	s := r.Sender
	written := max(s.BytesWritten, s.Bytes)
	t.Logf("sender: %.3f s, %d bytes acknowledged, %d written; the peer read %d; warnings %q", s.Seconds, s.Bytes, written, read, r.Warnings)
	if s.Seconds < d.Seconds()-0.05 || s.Seconds > d.Seconds()+0.2 {
		t.Errorf("the sender's writes took %.3f s for a %v test (bound +200 ms)", s.Seconds, d)
	}
	if written != read || s.Bytes > written {
		t.Errorf("written %d (acknowledged %d), but the peer read %d", written, s.Bytes, read)
	}
}
