//go:build linux && netlab

// Shaping accuracy checks of the lab itself (not of wirebench). They assert
// measured rates, so they are lab-tier tests behind the netlab build tag:
//
//	go test -tags netlab -run Shaping -v ./internal/netlab/

package netlab

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	shapeRate    = 100e6                   // bit/s of the emulated wire
	blastFor     = 2500 * time.Millisecond // sender time bound (≤ 3 s)
	receiveFor   = 5 * time.Second         // receiver's hard bound
	receiveIdle  = 300 * time.Millisecond
	udpPayload   = 1470
	udpMaxCount  = 1_000_000 // sender count bound: ~12 Gbit of offer, far above 2.5 s at the link rate
	tcpMaxBytes  = 64 << 20  // sender byte bound for TCP
	tcpWarmup    = 500 * time.Millisecond
	udpWarmup    = 200 * time.Millisecond
	udpTolerance = 0.005
	tcpTolerance = 0.01
	// exactTolerance is the exact wire's: issue 19 asks 0.3 % of both
	// UDP's and TCP's wire goodput.
	exactTolerance = 0.003
)

// arrival is one receive event: when it returned and the byte count so far.
type arrival struct {
	at    time.Time
	total int64
}

// goodputBetween returns the rate between two receive events: the bytes
// received after `from` (the first event's own bytes arrived before its
// timestamp, so they are not counted) over the time between the events.
func goodputBetween(from, to arrival) float64 {
	return float64(to.total-from.total) * 8 / to.at.Sub(from.at).Seconds()
}

// TestShapingUDP offers 1470-byte datagrams from A to B as fast as the
// sender can write (well above the 100 Mbit/s wire; tbf drops or the socket
// buffer holds back the excess) for at most 2.5 s, and counts them at B.
//
// Method: B timestamps every datagram as it is read. N datagrams span N-1
// inter-arrival gaps, so goodput = (bytes of datagrams 2..N) × 8 / (t_N -
// t_1). A full tbf queue drains at wire rate after the sender stops, so the
// tail is still wire-rate; tbf's initial bucket (3125 bytes) biases the
// result by under 0.01 %.
func TestShapingUDP(t *testing.T) {
	requireLab(t)
	for _, w := range []Wire{WireFilled, WireTBF} {
		for _, router := range []bool{false, true} {
			t.Run(w.String()+map[bool]string{false: " two hosts", true: " router"}[router], func(t *testing.T) {
				l := newLab(t, Config{Name: "shapeudp", RateBPS: shapeRate, Router: router, Wire: w})
				t.Cleanup(func() { logWire(t, l) })
				shapingUDP(t, l, udpTolerance)
			})
		}
	}
	t.Run("exact wire", func(t *testing.T) {
		l := newLab(t, Config{Name: "shapeudp", RateBPS: shapeRate, Wire: WireExact})
		t.Cleanup(func() { logWire(t, l) })
		shapingUDP(t, l, exactTolerance)
	})
}

// shapingUDP is TestShapingUDP on lab l.
func shapingUDP(t *testing.T, l *Lab, tolerance float64) { shapingUDPBatch(t, l, tolerance, 1) }

// shapingUDPBatch is shapingUDP with a sender that hands the kernel batch
// datagrams per send (UDP GSO) when batch > 1.
func shapingUDPBatch(t *testing.T, l *Lab, tolerance float64, batch int) {
	want := WireGoodput(shapeRate, udpPayload, 28)

	srv := listenInB(t, l)
	// SO_RCVBUFFORCE (we are root) gets past net.core.rmem_max: a receiver
	// starved of CPU for a few ms must not drop datagrams at its socket.
	if err := forceRcvBuf(srv, 8<<20); err != nil {
		t.Fatalf("receive buffer: %v", err)
	}

	rxDone := make(chan []arrival, 1)
	go func() {
		log := make([]arrival, 0, 32768)
		var total int64
		buf := make([]byte, 65536)
		hard := time.Now().Add(receiveFor)
		for {
			dl := hard
			if len(log) > 0 {
				if idle := time.Now().Add(receiveIdle); idle.Before(hard) {
					dl = idle
				}
			}
			srv.SetReadDeadline(dl)
			n, err := srv.Read(buf)
			now := time.Now()
			if err != nil {
				break
			}
			total += int64(n)
			log = append(log, arrival{at: now, total: total})
		}
		rxDone <- log
	}()

	c := dialFromA(t, l, srv)
	// A big send buffer lets the offer run far above the wire rate, so tbf
	// (not socket back-pressure) decides what gets through.
	_ = c.SetWriteBuffer(4 << 20)
	payload := make([]byte, udpPayload*batch)
	if batch > 1 {
		setGSO(t, c, udpPayload)
	}
	sent, sendErrs := 0, 0
	start := time.Now()
	for sent < udpMaxCount && time.Since(start) < blastFor {
		if _, err := c.Write(payload); err != nil {
			if errors.Is(err, syscall.ENOBUFS) {
				sendErrs++
				continue
			}
			t.Fatalf("send: %v", err)
		}
		sent += batch
	}
	offerDur := time.Since(start)
	offered := float64(sent) * udpPayload * 8 / offerDur.Seconds()

	log := <-rxDone
	if len(log) < 1000 {
		t.Fatalf("received only %d datagrams", len(log))
	}
	from, last := afterWarmup(log, udpWarmup), log[len(log)-1]
	got := goodputBetween(from, last)
	t.Logf("drops at B's socket (Udp RcvbufErrors in B): %s", udpRcvbufErrors(l.B))
	t.Logf("%s; offered %.2f Mbit/s (%d datagrams in %v, %d ENOBUFS), received %d (%.1f%%) over %v",
		loadAvg(), offered/1e6, sent, offerDur.Round(time.Millisecond), sendErrs, len(log),
		100*float64(len(log))/float64(sent), last.at.Sub(log[0].at).Round(time.Millisecond))
	t.Logf("UDP goodput %.3f Mbit/s over %v after %v warm-up, theory %.3f Mbit/s, error %+.3f%% (from first datagram: %.3f)",
		got/1e6, last.at.Sub(from.at).Round(time.Millisecond), udpWarmup, want/1e6, 100*(got-want)/want,
		goodputBetween(log[0], last)/1e6)
	if offered < 1.1*shapeRate {
		t.Fatalf("offer %.1f Mbit/s: the link was not driven above its rate", offered/1e6)
	}
	if math.Abs(got-want)/want > tolerance {
		t.Fatalf("UDP goodput %.3f Mbit/s is not within %.1f%% of %.3f", got/1e6, 100*tolerance, want/1e6)
	}
}

// TestShapingTCP sends from A to B over TCP for at most 2.5 s (and at most
// 64 MiB) and measures at B. TCP first has to find the rate, so the window
// starts at the first read at least 500 ms after the first byte and ends at
// the last read; goodput is the bytes read in between over that time.
// Expected: 1448/1538 of the wire (MSS 1448 with timestamps; frame = 1448 +
// 32 TCP + 20 IP + 14 Ethernet + 24 wire overhead). Both shaping tests run
// on the two-host lab and on the router lab (shaper on R's egress), where
// the same figures must hold: a GSO super-packet reaching R's tbf would be
// charged the per-frame overhead once and push TCP above 1448/1538.
func TestShapingTCP(t *testing.T) {
	requireLab(t)
	for _, w := range []Wire{WireFilled, WireTBF} {
		for _, router := range []bool{false, true} {
			t.Run(w.String()+map[bool]string{false: " two hosts", true: " router"}[router], func(t *testing.T) {
				l := newLab(t, Config{Name: "shapetcp", RateBPS: shapeRate, Router: router, Wire: w})
				t.Cleanup(func() { logWire(t, l) })
				shapingTCP(t, l, tcpTolerance)
			})
		}
	}
	t.Run("exact wire", func(t *testing.T) {
		l := newLab(t, Config{Name: "shapetcp", RateBPS: shapeRate, Wire: WireExact})
		t.Cleanup(func() { logWire(t, l) })
		shapingTCP(t, l, exactTolerance)
	})
}

// shapingTCP is TestShapingTCP on lab l.
func shapingTCP(t *testing.T, l *Lab, tolerance float64) {
	want := WireGoodput(shapeRate, 1448, 52)

	var ln net.Listener
	if err := l.B.Do(func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(l.B.Addr.String(), "0"))
		return err
	}); err != nil {
		t.Fatalf("listen in B: %v", err)
	}
	defer ln.Close()

	rxDone := make(chan []arrival, 1)
	go func() {
		var log []arrival
		defer func() { rxDone <- log }()
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		conn.SetReadDeadline(time.Now().Add(receiveFor))
		buf := make([]byte, 64<<10)
		var total int64
		for {
			n, err := conn.Read(buf)
			now := time.Now()
			if n > 0 {
				total += int64(n)
				log = append(log, arrival{at: now, total: total})
			}
			if err != nil {
				return
			}
		}
	}()

	var c net.Conn
	if err := l.A.Do(func() (err error) {
		d := net.Dialer{Timeout: 5 * time.Second}
		c, err = d.DialContext(context.Background(), "tcp", ln.Addr().String())
		return err
	}); err != nil {
		t.Fatalf("dial from A: %v", err)
	}
	c.SetWriteDeadline(time.Now().Add(blastFor))
	chunk := make([]byte, 128<<10)
	var written int64
	for written < tcpMaxBytes {
		n, err := c.Write(chunk)
		written += int64(n)
		if err != nil {
			if !errors.Is(err, io.ErrShortWrite) && !isTimeout(err) {
				t.Fatalf("write: %v", err)
			}
			break
		}
	}
	c.Close()
	log := <-rxDone
	if len(log) < 100 {
		t.Fatalf("only %d reads at B", len(log))
	}
	from, last := afterWarmup(log, tcpWarmup), log[len(log)-1]
	got := goodputBetween(from, last)
	t.Logf("%s; wrote %d bytes, B read %d in %d reads; window %v after %v warm-up",
		loadAvg(), written, last.total, len(log), last.at.Sub(from.at).Round(time.Millisecond), tcpWarmup)
	t.Logf("TCP goodput %.3f Mbit/s, theory %.3f Mbit/s, error %+.3f%% (whole transfer incl. start: %.3f)",
		got/1e6, want/1e6, 100*(got-want)/want, goodputBetween(log[0], last)/1e6)
	if math.Abs(got-want)/want > tolerance {
		t.Fatalf("TCP goodput %.3f Mbit/s is not within %.1f%% of %.3f", got/1e6, 100*tolerance, want/1e6)
	}
}

// logWire logs the exact wire's counters or the filler's, if the lab
// has either.
func logWire(t *testing.T, l *Lab) {
	for _, s := range l.WireStats() {
		t.Logf("%v", s)
	}
	for _, s := range l.FillStats() {
		t.Logf("%v", s)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// afterWarmup returns the first arrival at least warmup after the first.
func afterWarmup(log []arrival, warmup time.Duration) arrival {
	for _, a := range log {
		if a.at.Sub(log[0].at) >= warmup {
			return a
		}
	}
	return log[0]
}

// loadAvg returns the 1-minute load average and the CPU count, so that a
// figure measured on a busy machine can be read as such.
func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "load ?"
	}
	return "load " + f[0] + " on " + strconv.Itoa(runtime.NumCPU()) + " CPUs"
}

func forceRcvBuf(c *net.UDPConn, n int) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, n)
	}); err != nil {
		return err
	}
	return serr
}

// udpRcvbufErrors returns the Udp RcvbufErrors counter of h's namespace.
func udpRcvbufErrors(h *Host) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := h.Command(ctx, "cat", "/proc/net/snmp").Output()
	if err != nil {
		return "? (" + err.Error() + ")"
	}
	var names, values []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "Udp:" {
			if names == nil {
				names = f
			} else {
				values = f
			}
		}
	}
	for i, n := range names {
		if n == "RcvbufErrors" && i < len(values) {
			return values[i]
		}
	}
	return "?"
}
