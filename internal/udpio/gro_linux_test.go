package udpio

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// groPair is a GSO sender connected to a GRO receiver on loopback.
func groPair(t *testing.T, rcvOpt Options) (snd, rcv Conn) {
	t.Helper()
	rcvOpt.GRO = true
	rcvOpt.ReadBuffer = 4 << 20
	rcv = listen(t, "udp4", "127.0.0.1:0", rcvOpt)
	if !rcv.Capabilities().GRO {
		t.Skip("kernel refused UDP_GRO")
	}
	snd = dial(t, "udp4", rcv.LocalAddr().String(), Options{GSO: true})
	if !snd.Capabilities().GSO {
		t.Skip("kernel refused UDP_SEGMENT probe")
	}
	return snd, rcv
}

// TestGRORoundTrip sends GSO runs (which cross loopback as coalesced
// packets) to a GRO socket and checks that every datagram comes back as its
// own Message, whole, in order, with the sender's address; also when the
// caller reads fewer datagrams per call than a coalesced packet holds.
func TestGRORoundTrip(t *testing.T) {
	for _, per := range []int{1, 7, 64, 300} {
		t.Run(fmt.Sprintf("read=%d", per), func(t *testing.T) {
			snd, rcv := groPair(t, Options{})
			// 130 of 18 bytes, a shorter last one, then 40 of 1000.
			all := append(numbered(130, 18, rcv.LocalAddr(), "s"), numbered(1, 12, rcv.LocalAddr(), "short")...)
			all = append(all, numbered(40, 1000, rcv.LocalAddr(), "m")...)
			for i := range all {
				all[i].Addr = rcv.LocalAddr()
			}
			if n, err := snd.WriteBatch(all); n != len(all) || err != nil {
				t.Fatalf("WriteBatch = %d, %v", n, err)
			}
			got := readIn(t, rcv, len(all), per, 2048)
			check(t, got, all)
			shared := 0
			for i := range got {
				if got[i].Addr != snd.LocalAddr() {
					t.Fatalf("datagram %d from %v, want %v", i, got[i].Addr, snd.LocalAddr())
				}
				if i > 0 && got[i].Time.Equal(got[i-1].Time) {
					shared++
				}
			}
			if shared == 0 {
				t.Error("no two datagrams share a receive time: nothing was coalesced")
			}
		})
	}
}

// TestGROTruncation reads coalesced datagrams into buffers shorter than
// them: each is cut to the buffer and marked, and the next one starts
// where it belongs.
func TestGROTruncation(t *testing.T) {
	snd, rcv := groPair(t, Options{})
	all := numbered(20, 100, rcv.LocalAddr(), "t")
	if n, err := snd.WriteBatch(all); n != len(all) || err != nil {
		t.Fatalf("WriteBatch = %d, %v", n, err)
	}
	got := readIn(t, rcv, len(all), 64, 10)
	for i := range got {
		if !got[i].Truncated || got[i].N != 10 || !bytes.Equal(got[i].Buf[:10], all[i].Buf[:10]) {
			t.Fatalf("datagram %d: %d bytes %q truncated=%v, want the first 10 bytes of %q, truncated",
				i, got[i].N, got[i].Buf[:got[i].N], got[i].Truncated, all[i].Buf)
		}
	}
}

// TestGROPlainDatagrams: a GRO socket still takes datagrams that were never
// coalesced (plain sends, empty ones included) one by one.
func TestGROPlainDatagrams(t *testing.T) {
	_, rcv := groPair(t, Options{})
	plain := dial(t, "udp4", rcv.LocalAddr().String(), Options{})
	all := append(payloads(10, "p"), Message{Buf: []byte{}})
	if n, err := plain.WriteBatch(all); n != len(all) || err != nil {
		t.Fatalf("WriteBatch = %d, %v", n, err)
	}
	check(t, readIn(t, rcv, len(all), 64, 2048), all)
}

func TestReadBatchAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	for _, gro := range []bool{false, true} {
		t.Run(fmt.Sprintf("gro=%v", gro), func(t *testing.T) {
			rcv := listen(t, "udp4", "127.0.0.1:0", Options{ReadBuffer: 4 << 20, GRO: gro})
			snd := listen(t, "udp4", "127.0.0.1:0", Options{GSO: gro})
			out := sized(64, 64, rcv.LocalAddr())
			in := sized(64, 2048, rcv.LocalAddr())
			if err := rcv.SetReadDeadline(time.Now().Add(safety)); err != nil {
				t.Fatal(err)
			}
			allocs := testing.AllocsPerRun(50, func() {
				if _, err := snd.WriteBatch(out); err != nil {
					t.Fatal(err)
				}
				for got := 0; got < len(out); {
					n, err := rcv.ReadBatch(in)
					if err != nil {
						t.Fatal(err)
					}
					got += n
				}
			})
			if allocs > 0 {
				t.Errorf("sending and reading 64 datagrams allocates %.1f times; want 0", allocs)
			}
		})
	}
}

// TestGROSlotsGrowWithABacklog: datagrams the kernel cannot coalesce (a
// plain sender, as a server's many iperf clients are) take one GRO slot
// each. A GRO socket starts with 4 slots a read; with a backlog, each read
// that fills them all doubles them, up to 16, so a busy reader needs a
// quarter of the system calls (TestGarbageSoak fell seconds behind with 4).
func TestGROSlotsGrowWithABacklog(t *testing.T) {
	rcv := listen(t, "udp4", "127.0.0.1:0", Options{GRO: true, ReadBuffer: 4 << 20})
	if !rcv.Capabilities().GRO {
		t.Skip("kernel refused UDP_GRO")
	}
	snd := dial(t, "udp4", rcv.LocalAddr().String(), Options{})
	const total = 4 + 8 + 16 + 16 + 3
	msgs := numbered(total, 100, rcv.LocalAddr(), "b")
	if n, err := snd.WriteBatch(msgs); n != total || err != nil {
		t.Fatalf("WriteBatch = %d, %v", n, err)
	}
	buf := make([]Message, 64)
	for i := range buf {
		buf[i].Buf = make([]byte, 2048)
	}
	var sizes []int
	for got := 0; got < total; {
		_ = rcv.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := rcv.ReadBatch(buf)
		if err != nil {
			t.Fatalf("ReadBatch after %d of %d: %v", got, total, err)
		}
		sizes = append(sizes, n)
		got += n
	}
	if want := []int{4, 8, 16, 16, 3}; fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Errorf("datagrams per read %v, want %v", sizes, want)
	}
}
