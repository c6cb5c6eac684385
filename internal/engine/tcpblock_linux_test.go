package engine

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/stats"
)

// socketMode reads conn's O_NONBLOCK flag and SO_SNDTIMEO/SO_RCVTIMEO.
func socketMode(t *testing.T, conn net.Conn) (nonblock bool, snd, rcv unix.Timeval) {
	t.Helper()
	rc, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ferr error
	_ = rc.Control(func(fd uintptr) {
		var fl int
		fl, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0)
		nonblock = fl&unix.O_NONBLOCK != 0
		s, _ := unix.GetsockoptTimeval(int(fd), unix.SOL_SOCKET, unix.SO_SNDTIMEO)
		r, _ := unix.GetsockoptTimeval(int(fd), unix.SOL_SOCKET, unix.SO_RCVTIMEO)
		snd, rcv = *s, *r
	})
	if ferr != nil {
		t.Fatal(ferr)
	}
	return nonblock, snd, rcv
}

// TestSendTCPBlockingByteCount: a blocking send of a byte count writes
// exactly that many bytes (the peer reads them all, the counters agree)
// and hands the socket back to Go's poller as it found it.
func TestSendTCPBlockingByteCount(t *testing.T) {
	d, a := tcpPair(t)
	const n = 5<<20 + 7
	read := make(chan int64, 1)
	go func() {
		got, _ := io.Copy(io.Discard, a)
		read <- got
	}()
	var c stats.Counters
	res, err := SendTCP(context.Background(), d, TCPSendConfig{Buffer: make([]byte, 128<<10), Bytes: n, Counted: 60, Blocking: true}, &c)
	if err != nil || res.Bytes != n {
		t.Fatalf("%d bytes, error %v: want %d and none", res.Bytes, err, n)
	}
	if c.Bytes.Load() != 60+n {
		t.Errorf("counters %d, want %d (the header's 60 and the data)", c.Bytes.Load(), 60+n)
	}
	nonblock, snd, rcv := socketMode(t, d)
	if !nonblock || snd != (unix.Timeval{}) || rcv != (unix.Timeval{}) {
		t.Errorf("after the send: O_NONBLOCK %v, SO_SNDTIMEO %v, SO_RCVTIMEO %v; want the poller's mode back", nonblock, snd, rcv)
	}
	d.Close()
	if got := <-read; got != n {
		t.Errorf("the peer read %d bytes, want %d", got, n)
	}
}

// TestSendTCPBlockingStalledPeer: a blocking timed send to a peer that
// stops reading ends without an error, and counts exactly the bytes the
// kernel took: the peer reads that many afterwards.
func TestSendTCPBlockingStalledPeer(t *testing.T) {
	d, a := tcpPair(t)
	_ = d.(*net.TCPConn).SetWriteBuffer(256 << 10)
	_ = a.(*net.TCPConn).SetReadBuffer(256 << 10)
	res, err := SendTCP(context.Background(), d, TCPSendConfig{Buffer: make([]byte, 128<<10), Duration: 400 * time.Millisecond, Blocking: true}, new(stats.Counters))
	if err != nil {
		t.Fatalf("a send cut short by its end returned %v", err)
	}
	if res.Bytes <= 0 {
		t.Fatalf("nothing written")
	}
	d.Close()
	got, err := io.Copy(io.Discard, a)
	if err != nil {
		t.Fatal(err)
	}
	if got != res.Bytes {
		t.Errorf("the peer read %d bytes, the sender counted %d", got, res.Bytes)
	}
}

// TestSendTCPBlockingCancel: cancelling the context ends a blocking send
// to a stalled peer (one write step later at most), without an error.
func TestSendTCPBlockingCancel(t *testing.T) {
	d, _ := tcpPair(t)
	ctx, cancel := context.WithCancel(context.Background())
	var c stats.Counters
	done := make(chan error, 1)
	go func() {
		_, err := SendTCP(ctx, d, TCPSendConfig{Buffer: make([]byte, 128<<10), Duration: time.Hour, Blocking: true}, &c)
		done <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); c.Bytes.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("nothing sent in 30 s")
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a cancelled send returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the send did not end within 30 s of the cancel")
	}
}
