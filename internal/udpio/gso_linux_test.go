package udpio

import (
	"bytes"
	"fmt"
	"net/netip"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func sized(n, size int, to netip.AddrPort) []Message {
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i].Buf = make([]byte, size)
		msgs[i].Addr = to
	}
	return msgs
}

func TestGSORun(t *testing.T) {
	a := netip.MustParseAddrPort("127.0.0.1:1000")
	b := netip.MustParseAddrPort("127.0.0.1:2000")
	mapped := netip.MustParseAddrPort("[::ffff:127.0.0.1]:1000")
	cat := func(parts ...[]Message) []Message {
		var out []Message
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name string
		msgs []Message
		want int
	}{
		{"empty", nil, 0},
		{"one", sized(1, 100, a), 1},
		{"equal", sized(10, 100, a), 10},
		{"capped at 64", sized(100, 10, a), gsoMaxSegments},
		{"capped by bytes", sized(64, 1470, a), gsoMaxBytes / 1470},
		{"shorter last", cat(sized(5, 100, a), sized(3, 50, a)), 6},
		{"longer stops", cat(sized(5, 100, a), sized(3, 150, a)), 5},
		{"destination change", cat(sized(5, 100, a), sized(3, 100, b)), 5},
		{"mapped is the same destination", cat(sized(5, 100, a), sized(3, 100, mapped)), 8},
		{"empty payload alone", cat(sized(1, 0, a), sized(3, 0, a)), 1},
		{"empty payload stops", cat(sized(2, 10, a), sized(3, 0, a)), 2},
		{"huge alone", sized(3, 40000, a), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gsoRun(tt.msgs); got != tt.want {
				t.Errorf("gsoRun = %d, want %d", got, tt.want)
			}
		})
	}
}

func numbered(n, size int, to netip.AddrPort, tag string) []Message {
	msgs := sized(n, size, to)
	for i := range msgs {
		copy(msgs[i].Buf, fmt.Sprintf("%s-%04d", tag, i))
	}
	return msgs
}

// TestGSORoundTrip sends runs that coalesce and runs that must not, to two
// receivers, and checks every datagram arrives whole and in order.
func TestGSORoundTrip(t *testing.T) {
	for _, connected := range []bool{false, true} {
		t.Run(fmt.Sprintf("connected=%v", connected), func(t *testing.T) {
			rcvA := listen(t, "udp4", "127.0.0.1:0", Options{ReadBuffer: 4 << 20})
			rcvB := listen(t, "udp4", "127.0.0.1:0", Options{ReadBuffer: 4 << 20})
			var snd Conn
			if connected {
				snd = dial(t, "udp4", rcvA.LocalAddr().String(), Options{GSO: true, BatchSize: 8})
			} else {
				snd = listen(t, "udp4", "127.0.0.1:0", Options{GSO: true, BatchSize: 8})
			}
			if !snd.Capabilities().GSO {
				t.Skip("kernel refused UDP_SEGMENT probe")
			}
			a, b := rcvA.LocalAddr(), rcvB.LocalAddr()
			if connected {
				a, b = netip.AddrPort{}, rcvA.LocalAddr()
			}
			toA := append(numbered(130, 1000, a, "a"), numbered(1, 300, a, "a-last")...)
			toB := numbered(10, 64, b, "b")
			more := numbered(5, 1000, a, "c")
			all := append(append(append([]Message{}, toA...), toB...), more...)
			if n, err := snd.WriteBatch(all); n != len(all) || err != nil {
				t.Fatalf("WriteBatch = %d, %v; want %d, nil", n, err, len(all))
			}
			wantA, wantB := append(toA, more...), toB
			if connected {
				wantA, wantB = all, nil
			}
			check(t, readN(t, rcvA, len(wantA), 2048), wantA)
			if wantB != nil {
				check(t, readN(t, rcvB, len(wantB), 2048), wantB)
			}
			if s := snd.(*batchConn).gso.supers.Load(); s == 0 {
				t.Fatal("no segmented send was made")
			}
			if !snd.Capabilities().GSO {
				t.Fatal("GSO switched itself off on loopback")
			}
		})
	}
}

func check(t *testing.T, got, want []Message) {
	t.Helper()
	for i := range want {
		if got[i].Truncated || !bytes.Equal(got[i].Buf[:got[i].N], want[i].Buf) {
			t.Fatalf("datagram %d: got %d bytes %.12q, want %d bytes %.12q",
				i, got[i].N, got[i].Buf[:got[i].N], len(want[i].Buf), want[i].Buf)
		}
	}
}

func TestGSOWriteBatchAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	srv := listen(t, "udp4", "127.0.0.1:0", Options{})
	cli := listen(t, "udp4", "127.0.0.1:0", Options{GSO: true})
	if !cli.Capabilities().GSO {
		t.Skip("kernel refused UDP_SEGMENT probe")
	}
	msgs := sized(256, 1470, srv.LocalAddr())
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := cli.WriteBatch(msgs); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("GSO WriteBatch of 256 datagrams allocates %.1f times per call; want 0", allocs)
	}
}

// TestGSOFallbackKeepsEveryDatagram: a socket whose segmented sends the
// kernel refuses (SO_NO_CHECK: UDP without checksums cannot be segmented,
// EINVAL, as a device without checksum offload answers EIO) switches GSO
// off and sends the whole batch plainly: every datagram arrives, in order.
func TestGSOFallbackKeepsEveryDatagram(t *testing.T) {
	rcv := listen(t, "udp4", "127.0.0.1:0", Options{ReadBuffer: 4 << 20})
	noCheck := func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_NO_CHECK, 1) }); err != nil {
			return err
		}
		return serr
	}
	snd := dial(t, "udp4", rcv.LocalAddr().String(), Options{GSO: true, Control: noCheck})
	if !snd.Capabilities().GSO {
		t.Skip("kernel refused UDP_SEGMENT probe")
	}
	all := numbered(130, 200, netip.AddrPort{}, "f")
	if n, err := snd.WriteBatch(all); n != len(all) || err != nil {
		t.Fatalf("WriteBatch = %d, %v; want %d, nil", n, err, len(all))
	}
	if snd.Capabilities().GSO {
		t.Error("GSO still on after the kernel refused a segmented send")
	}
	check(t, readN(t, rcv, len(all), 2048), all)
	// Later batches go out plainly at once.
	more := numbered(10, 200, netip.AddrPort{}, "g")
	if n, err := snd.WriteBatch(more); n != len(more) || err != nil {
		t.Fatalf("second WriteBatch = %d, %v", n, err)
	}
	check(t, readN(t, rcv, len(more), 2048), more)
}
