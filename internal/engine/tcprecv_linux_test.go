package engine

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/stats"
)

// raiseMark makes any rate raise the receive low-water mark to its
// maximum, and returns the highest mark set so far.
func raiseMark(t *testing.T) *atomic.Int64 {
	t.Helper()
	var most atomic.Int64
	saved := lowat
	lowat.lag = time.Second // 1 MiB/s of data is enough for the maximum
	lowat.onSet = func(n int) {
		if int64(n) > most.Load() {
			most.Store(int64(n))
		}
	}
	t.Cleanup(func() { lowat = saved })
	return &most
}

// burst writes on d until the receiver's mark reached half its maximum (at
// most 1 GiB) and returns the bytes written. Half: the mark is also held
// to a quarter of the receive buffer, which the kernel sizes as it likes
// (it stopped at 1,014,217 bytes once, in a 4 MiB buffer).
func burst(t *testing.T, d net.Conn, most *atomic.Int64) int64 {
	return burstTo(t, d, most, int64(lowat.max/2))
}

// burstTo writes on d until the receiver's mark reached want (at most
// 1 GiB) and returns the bytes written.
func burstTo(t *testing.T, d net.Conn, most *atomic.Int64, want int64) int64 {
	t.Helper()
	buf := make([]byte, 128<<10)
	var sent int64
	for most.Load() < want && sent < 1<<30 {
		n, err := d.Write(buf)
		sent += int64(n)
		if err != nil {
			t.Fatalf("writing the burst: %v", err)
		}
	}
	if most.Load() < want {
		t.Fatalf("the receive low-water mark reached only %d bytes after a %d-byte burst; want %d", most.Load(), sent, want)
	}
	return sent
}

// markOf reads conn's SO_RCVLOWAT.
func markOf(t *testing.T, conn net.Conn) int {
	t.Helper()
	rc, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	v := -1
	_ = rc.Control(func(fd uintptr) { v, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVLOWAT) })
	return v
}

type received struct {
	res TCPResult
	err error
}

// TestReceiveTCPMarkHoldsNothingBack: after a burst raised the receive
// low-water mark, a tail far below it is still counted while the
// connection stays open (the mark's tick takes it), the total is exact,
// and the mark is back at one byte when the receive ends.
func TestReceiveTCPMarkHoldsNothingBack(t *testing.T) {
	most := raiseMark(t)
	d, a := tcpPair(t)
	var c stats.Counters
	done := make(chan received, 1)
	go func() {
		res, err := ReceiveTCPWith(context.Background(), a, TCPReceiveConfig{BufSize: 128 << 10}, &c)
		done <- received{res, err}
	}()
	sent := burst(t, d, most)
	const tail = 1000
	if _, err := d.Write(make([]byte, tail)); err != nil {
		t.Fatal(err)
	}
	want := sent + tail
	for deadline := time.Now().Add(30 * time.Second); c.Bytes.Load() != want && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := c.Bytes.Load(); got != want {
		t.Fatalf("counted %d bytes of %d while the sender waited 30 s: the mark held the tail back", got, want)
	}
	d.Close()
	r := <-done
	if r.err != nil || r.res.Bytes != want {
		t.Fatalf("received %d bytes, error %v; want %d and none", r.res.Bytes, r.err, want)
	}
	if m := markOf(t, a); m != 1 {
		t.Errorf("SO_RCVLOWAT %d after the receive; want 1", m)
	}
}

// TestReceiveTCPIdleAfterBurst: a sender that goes silent after a burst
// (without closing) still ends the receive on the idle timeout, with
// every byte counted.
func TestReceiveTCPIdleAfterBurst(t *testing.T) {
	most := raiseMark(t)
	d, a := tcpPair(t)
	defer d.Close()
	var c stats.Counters
	done := make(chan received, 1)
	go func() {
		res, err := ReceiveTCPWith(context.Background(), a, TCPReceiveConfig{BufSize: 128 << 10, Idle: 300 * time.Millisecond}, &c)
		done <- received{res, err}
	}()
	sent := burst(t, d, most)
	if _, err := d.Write(make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !errors.Is(r.err, ErrIdle) || r.res.Bytes != sent+100 {
		t.Fatalf("received %d bytes, error %v; want %d and the idle timeout", r.res.Bytes, r.err, sent+100)
	}
}

// TestReceiveTCPCopy: with Copy the data is read into the buffer, and
// counted the same.
func TestReceiveTCPCopy(t *testing.T) {
	d, a := tcpPair(t)
	const n = 3<<20 + 5
	go func() {
		_, _ = d.Write(make([]byte, n))
		d.Close()
	}()
	var c stats.Counters
	res, err := ReceiveTCPWith(context.Background(), a, TCPReceiveConfig{BufSize: 64 << 10, Copy: true}, &c)
	if err != nil || res.Bytes != n || c.Bytes.Load() != n {
		t.Fatalf("received %d (counters %d), error %v; want %d and none", res.Bytes, c.Bytes.Load(), err, n)
	}
}

// TestReceiveTCPMarkFitsTheBuffer: with a small receive buffer (-w) the
// mark stays at a quarter of it, so the window never has to close before
// the receiver wakes.
func TestReceiveTCPMarkFitsTheBuffer(t *testing.T) {
	most := raiseMark(t)
	d, a := tcpPair(t)
	if err := a.(*net.TCPConn).SetReadBuffer(256 << 10); err != nil {
		t.Fatal(err)
	}
	rc, _ := a.(*net.TCPConn).SyscallConn()
	rb := 0
	_ = rc.Control(func(fd uintptr) { rb, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF) })
	var c stats.Counters
	done := make(chan received, 1)
	go func() {
		res, err := ReceiveTCPWith(context.Background(), a, TCPReceiveConfig{BufSize: 128 << 10}, &c)
		done <- received{res, err}
	}()
	sent := burstTo(t, d, most, int64(lowat.min))
	// Go on a while: the mark is set again every lowat.every.
	for i := 0; i < 512; i++ {
		n, err := d.Write(make([]byte, 128<<10))
		sent += int64(n)
		if err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	r := <-done
	if r.err != nil || r.res.Bytes != sent {
		t.Fatalf("received %d bytes, error %v; want %d and none", r.res.Bytes, r.err, sent)
	}
	if got := most.Load(); got > int64(rb/4) {
		t.Errorf("the mark reached %d bytes with a %d-byte receive buffer; want at most a quarter of it", got, rb)
	}
}

// TestReceiveTCPFirstByte: a receiver started before its peer sends says
// when the first byte came, after its start (Since) and by no less than
// the peer's own delay, for the discarding and the copying reader alike.
func TestReceiveTCPFirstByte(t *testing.T) {
	for _, cp := range []bool{false, true} {
		d, a := tcpPair(t)
		const delay = 30 * time.Millisecond
		since := time.Now()
		go func() {
			time.Sleep(delay)
			_, _ = d.Write(make([]byte, 1<<20))
			d.Close()
		}()
		var c stats.Counters
		res, err := ReceiveTCPWith(context.Background(), a, TCPReceiveConfig{BufSize: 64 << 10, Since: since, Copy: cp}, &c)
		if err != nil || res.Bytes != 1<<20 {
			t.Fatalf("copy %v: received %d, error %v; want %d and none", cp, res.Bytes, err, 1<<20)
		}
		if fb := res.FirstByteSeconds(); fb < delay.Seconds() || res.First.After(res.End) {
			t.Fatalf("copy %v: first byte %.4f s after the start (end %.4f s); want at least %.3f s and not after the end",
				cp, fb, res.End.Sub(res.Start).Seconds(), delay.Seconds())
		}
	}
	if (TCPResult{}).FirstByteSeconds() != 0 {
		t.Fatal("a result with no byte read has a first byte")
	}
}

// TestReceiveTCPFromTheFirstBytesArrival: bytes that arrived before a
// busy host's Accept returned are timed from their arrival, per the
// kernel's stamp (the listener set with StampArrivals): the receive starts
// there, not at the Since given after the Accept, which would leave out
// the time they took to arrive and read above the wire.
func TestReceiveTCPFromTheFirstBytesArrival(t *testing.T) {
	ln := stampingListener(t)
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sent := time.Now()
	if _, err := d.Write(make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	const late = 100 * time.Millisecond
	time.Sleep(late) // the Accept of a host busy elsewhere
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	since := time.Now()
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, _ = d.Write(make([]byte, 64<<10))
		d.Close()
	}()
	var c stats.Counters
	res, err := ReceiveTCPWith(context.Background(), a, TCPReceiveConfig{BufSize: 64 << 10, Since: since}, &c)
	if err != nil || res.Bytes != 128<<10 {
		t.Fatalf("received %d, error %v; want %d and none", res.Bytes, err, 128<<10)
	}
	if res.Start.Before(sent) || since.Sub(res.Start) < late || !res.First.Equal(res.Start) {
		t.Errorf("the receive starts %v before the Since given after the Accept (first byte %v after its start, written %v before it); want at least %v, at the first byte, not before it was written",
			since.Sub(res.Start), res.First.Sub(res.Start), res.Start.Sub(sent), late)
	}
}

// stampingListener returns a loopback listener set with StampArrivals
// once the kernel stamps what it receives. The first socket on a host to
// ask for stamps switches the kernel's stamping on from a work queue, a
// little after its setsockopt returns: until then arrivals carry no stamp
// (49 of 60 fresh test processes saw none on the first connection). So
// probe connections, each one byte, until one is stamped (at most 5 s).
func stampingListener(t *testing.T) net.Listener {
	t.Helper()
	lc := net.ListenConfig{Control: StampArrivals(nil)}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if probeStamp(t, ln) {
			return ln
		}
	}
	t.Fatal("the kernel stamped no arrival on a listener set with StampArrivals in 5 s")
	return nil
}

// probeStamp sends one byte through ln and says whether the kernel
// stamped its arrival.
func probeStamp(t *testing.T, ln net.Listener) bool {
	t.Helper()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	r := newDiscardReader(a, false)
	if r == nil || !r.stamping {
		t.Fatal("an accepted connection of a listener set with StampArrivals asks for no stamps")
	}
	if n, err := r.Read(); n != 1 || err != nil {
		t.Fatalf("read %d bytes of the probe's one, error %v", n, err)
	}
	_, ok := r.arrival(time.Now())
	return ok
}
