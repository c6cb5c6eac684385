package udpio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestCapabilitiesLinux(t *testing.T) {
	tests := []struct {
		opt       Options
		wantBatch bool
	}{
		{Options{}, true},
		{Options{NoBatch: true}, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("nobatch=%v", tt.opt.NoBatch), func(t *testing.T) {
			c := listen(t, "udp4", "127.0.0.1:0", tt.opt)
			caps := c.Capabilities()
			if caps.Batch != tt.wantBatch || !caps.KernelRxTime || !caps.DropCounter {
				t.Fatalf("Capabilities = %+v; want Batch=%v, KernelRxTime and DropCounter", caps, tt.wantBatch)
			}
			if caps.ReadBuffer <= 0 || caps.WriteBuffer <= 0 {
				t.Fatalf("Capabilities = %+v; want the kernel's buffer sizes", caps)
			}
		})
	}
}

func TestBufferSizes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SO_RCVBUFFORCE needs root (CAP_NET_ADMIN)")
	}
	const size = 8 << 20 // above the default rmem_max/wmem_max
	c := listen(t, "udp4", "127.0.0.1:0", Options{ReadBuffer: size, WriteBuffer: size})
	caps := c.Capabilities()
	if !caps.ReadBufferForced || !caps.WriteBufferForced {
		t.Fatalf("Capabilities = %+v; want both buffers forced as root", caps)
	}
	// Linux doubles the requested size for bookkeeping overhead.
	if caps.ReadBuffer != 2*size || caps.WriteBuffer != 2*size {
		t.Fatalf("buffers = %d/%d; want %d", caps.ReadBuffer, caps.WriteBuffer, 2*size)
	}
}

func TestKernelTimestamps(t *testing.T) {
	for _, noBatch := range []bool{false, true} {
		t.Run(fmt.Sprintf("nobatch=%v", noBatch), func(t *testing.T) {
			opt := Options{NoBatch: noBatch}
			srv := listen(t, "udp4", "127.0.0.1:0", opt)
			cli := dial(t, "udp4", srv.LocalAddr().String(), opt)
			before := time.Now()
			if _, err := cli.WriteBatch(payloads(3, "ts")); err != nil {
				t.Fatal(err)
			}
			// Wait before reading so the post-syscall fallback time would
			// be visibly later than the kernel's stamp.
			time.Sleep(20 * time.Millisecond)
			readStart := time.Now()
			got := readN(t, srv, 3, 64)
			for i, m := range got {
				if m.Time.Before(before) || !m.Time.Before(readStart) {
					t.Errorf("datagram %d: time %v not between send (%v) and the start of the read (%v)",
						i, m.Time, before, readStart)
				}
				if i > 0 && m.Time.Before(got[i-1].Time) {
					t.Errorf("datagram %d: time %v before datagram %d's %v", i, m.Time, i-1, got[i-1].Time)
				}
			}
		})
	}
}

// TestDrops overflows a small receive buffer with a bounded burst that is
// not read, then checks the kernel's drop count accounts for every datagram
// that did not arrive.
func TestDrops(t *testing.T) {
	for _, noBatch := range []bool{false, true} {
		t.Run(fmt.Sprintf("nobatch=%v", noBatch), func(t *testing.T) {
			opt := Options{NoBatch: noBatch, ReadBuffer: 4096}
			srv := listen(t, "udp4", "127.0.0.1:0", opt)
			cli := dial(t, "udp4", srv.LocalAddr().String(), Options{})
			if n, ok := srv.Drops(); !ok || n != 0 {
				t.Fatalf("Drops on a fresh socket = %d, %v; want 0, true", n, ok)
			}
			const burst = 400
			if sent, err := cli.WriteBatch(payloads(burst, "burst")); sent != burst || err != nil {
				t.Fatalf("WriteBatch = %d, %v", sent, err)
			}
			received := drain(t, srv)
			drops, ok := srv.Drops()
			if !ok || drops == 0 {
				t.Fatalf("Drops = %d, %v after overflowing a %d-byte buffer; want > 0",
					drops, ok, srv.Capabilities().ReadBuffer)
			}
			if uint64(received)+drops != burst {
				t.Fatalf("received %d + dropped %d = %d; want %d sent", received, drops, uint64(received)+drops, burst)
			}
			// SO_RXQ_OVFL reports the count with the next datagram queued:
			// a probe carries it, and the cmsg path alone must agree.
			if _, err := cli.WriteBatch(payloads(1, "probe")); err != nil {
				t.Fatal(err)
			}
			readN(t, srv, 1, 64)
			if got := srv.(interface{ cmsgCount() uint64 }).cmsgCount(); got != drops {
				t.Fatalf("SO_RXQ_OVFL count = %d, SO_MEMINFO count = %d; want equal", got, drops)
			}
			t.Logf("sent %d, received %d, dropped %d (receive buffer %d bytes)",
				burst, received, drops, srv.Capabilities().ReadBuffer)
		})
	}
}

// drain reads until the socket is empty: everything sent on loopback is
// queued or dropped before WriteBatch returns, so a short deadline ends it.
func drain(t *testing.T, c Conn) int {
	t.Helper()
	msgs := make([]Message, 64)
	for i := range msgs {
		msgs[i].Buf = make([]byte, 128)
	}
	total := 0
	for {
		if err := c.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		n, err := c.ReadBatch(msgs)
		total += n
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return total
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func (b *base) cmsgCount() uint64 { return b.cmsgDrops.Load() }

func TestWriteBatchAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	srv := listen(t, "udp4", "127.0.0.1:0", Options{ReadBuffer: 1 << 20})
	cli := listen(t, "udp4", "127.0.0.1:0", Options{})
	msgs := payloads(64, "alloc")
	for i := range msgs {
		msgs[i].Addr = srv.LocalAddr()
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := cli.WriteBatch(msgs); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("WriteBatch of 64 datagrams allocates %.1f times per call; want 0", allocs)
	}
}

// cmsg builds one control message as the kernel lays it out.
func cmsg(level, typ int, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	h := (*unix.Cmsghdr)(unsafePointerOf(b))
	h.Level, h.Type = int32(level), int32(typ)
	h.SetLen(unix.CmsgLen(len(data)))
	copy(b[unix.CmsgLen(0):], data)
	return b
}

func timespec(sec, nsec int64) []byte {
	b := make([]byte, 16)
	binary.NativeEndian.PutUint64(b, uint64(sec))
	binary.NativeEndian.PutUint64(b[8:], uint64(nsec))
	return b
}

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

func join(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

func TestParseOOB(t *testing.T) {
	stamp := time.Unix(1_700_000_000, 123_456_789)
	tests := []struct {
		name string
		oob  []byte
		want rxMeta
	}{
		{"empty", nil, rxMeta{}},
		{"timestamp", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespec(1_700_000_000, 123_456_789)), rxMeta{time: stamp}},
		{"drops", cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, u32(42)), rxMeta{drops: 42, hasDrops: true}},
		{"both", join(cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespec(1_700_000_000, 123_456_789)),
			cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, u32(7))), rxMeta{time: stamp, drops: 7, hasDrops: true}},
		{"gro and drops", join(cmsg(unix.SOL_UDP, unix.UDP_GRO, u32(1400)),
			cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, u32(9))), rxMeta{drops: 9, hasDrops: true, groSize: 1400}},
		{"unknown first", join(cmsg(unix.SOL_UDP, unix.UDP_SEGMENT, u32(1400)),
			cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, u32(9))), rxMeta{drops: 9, hasDrops: true}},
		{"short gro", cmsg(unix.SOL_UDP, unix.UDP_GRO, []byte{1, 2}), rxMeta{}},
		{"wrong level", cmsg(unix.SOL_IP, unix.SO_RXQ_OVFL, u32(9)), rxMeta{}},
		{"bad nsec", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespec(1, 1e9)), rxMeta{}},
		{"short timestamp", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, []byte{1, 2, 3}), rxMeta{}},
		{"truncated header", cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, u32(9))[:8], rxMeta{}},
		{"length past end", cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, u32(9))[:unix.CmsgLen(3)], rxMeta{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseOOB(tt.oob)
			if !got.time.Equal(tt.want.time) || got.drops != tt.want.drops || got.hasDrops != tt.want.hasDrops ||
				got.groSize != tt.want.groSize {
				t.Errorf("parseOOB = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseOOBAllocs(t *testing.T) {
	oob := join(cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespec(1_700_000_000, 1)),
		cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, u32(7)))
	if a := testing.AllocsPerRun(100, func() { parseOOB(oob) }); a != 0 {
		t.Errorf("parseOOB allocates %.1f times; want 0", a)
	}
}

func FuzzParseOOB(f *testing.F) {
	f.Add([]byte{})
	f.Add(cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespec(1_700_000_000, 5)))
	f.Add(join(cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, u32(3)), cmsg(unix.SOL_UDP, unix.UDP_GRO, u32(1))))
	f.Fuzz(func(t *testing.T, oob []byte) {
		m := parseOOB(oob)
		if !m.time.IsZero() && (m.time.Nanosecond() < 0 || m.time.Unix() <= 0) {
			t.Fatalf("implausible time %v", m.time)
		}
		if !m.hasDrops && m.drops != 0 {
			t.Fatalf("drops %d without hasDrops", m.drops)
		}
	})
}

// TestSendErrorSurfaced checks a kernel send error reaches the caller wrapped,
// with the count of datagrams sent: on loopback a datagram to a closed port
// makes the next send on the connected socket fail with ECONNREFUSED.
func TestSendErrorSurfaced(t *testing.T) {
	for _, noBatch := range []bool{false, true} {
		t.Run(fmt.Sprintf("nobatch=%v", noBatch), func(t *testing.T) {
			dead := listen(t, "udp4", "127.0.0.1:0", Options{})
			addr := dead.LocalAddr().String()
			dead.Close()
			cli := dial(t, "udp4", addr, Options{NoBatch: noBatch})
			var err error
			for range 10 {
				var n int
				n, err = cli.WriteBatch(payloads(1, "refused"))
				if err != nil {
					if n != 0 {
						t.Fatalf("WriteBatch = %d, %v; want 0 sent with the error", n, err)
					}
					break
				}
			}
			if !errors.Is(err, unix.ECONNREFUSED) {
				t.Fatalf("WriteBatch error = %v; want ECONNREFUSED after sending to a closed port", err)
			}
		})
	}
}

// TestArrivedIsMonotonic: on every receive path (recvmmsg, one datagram
// per call, GRO) each datagram carries Message.Arrived, which has the
// monotonic clock in it, lies between its send and the end of its read,
// and, with the kernel's stamps, stays as early as the datagram arrived
// however late it is read.
func TestArrivedIsMonotonic(t *testing.T) {
	for _, opt := range []Options{{}, {NoBatch: true}, {GRO: true}} {
		t.Run(fmt.Sprintf("nobatch=%v gro=%v", opt.NoBatch, opt.GRO), func(t *testing.T) {
			srv := listen(t, "udp4", "127.0.0.1:0", opt)
			cli := dial(t, "udp4", srv.LocalAddr().String(), Options{})
			// A read that finds the socket empty first, as a reader
			// that keeps up does (the bound of Arrived's wait).
			_ = srv.SetReadDeadline(time.Now().Add(time.Millisecond))
			_, _ = srv.ReadBatch(make([]Message, 4))
			_ = srv.SetReadDeadline(time.Time{})
			sent := time.Now()
			if _, err := cli.WriteBatch(payloads(3, "mono")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // all three wait in the socket
			readStart := time.Now()
			for i, m := range readN(t, srv, 3, 64) {
				if m.Arrived == m.Arrived.Round(0) {
					t.Errorf("datagram %d: Arrived %v has no monotonic reading", i, m.Arrived)
				}
				if m.Arrived.Before(sent) || time.Now().Before(m.Arrived) {
					t.Errorf("datagram %d: arrived %v after the send, after the read", i, m.Arrived.Sub(sent))
				}
				if srv.Capabilities().KernelRxTime && !m.Arrived.Before(readStart) {
					t.Errorf("datagram %d: arrived %v after the send, read %v after it: the wait in the socket was not taken off",
						i, m.Arrived.Sub(sent), readStart.Sub(sent))
				}
				if m.Time != m.Time.Round(0) {
					t.Errorf("datagram %d: Time %v has a monotonic reading; it must compare like a kernel stamp", i, m.Time)
				}
			}
		})
	}
}

// TestArrivalBounded: the wait a kernel stamp claims is taken off the
// read's time only up to when the socket was last found empty, so a wall
// clock that stepped while the datagram waited moves its arrival by no
// more than that; a stamp after the read (a step back) means no wait.
func TestArrivalBounded(t *testing.T) {
	read := time.Now()
	wall := read.Round(0)
	for _, tc := range []struct {
		name         string
		stamp, empty time.Time
		want         time.Time
	}{
		{"waited 5 ms", wall.Add(-5 * time.Millisecond), read.Add(-time.Second), read.Add(-5 * time.Millisecond)},
		{"no stamp", wall, read.Add(-time.Second), read},
		{"stepped ahead while waiting", wall.Add(-10 * time.Second), read.Add(-20 * time.Millisecond), read.Add(-20 * time.Millisecond)},
		{"stepped back while waiting", wall.Add(10 * time.Second), read.Add(-20 * time.Millisecond), read},
		{"never found empty", wall.Add(-3 * time.Second), time.Time{}, read.Add(-3 * time.Second)},
	} {
		if got := arrival(read, wall, tc.stamp, tc.empty); got != tc.want || got == got.Round(0) {
			t.Errorf("%s: arrived %v before the read; want %v, with a monotonic reading", tc.name, read.Sub(got), read.Sub(tc.want))
		}
	}
}
