package edtwire

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"
)

func TestWireBytes(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{1512, 1536}, // 1470-byte UDP datagram
		{1514, 1538}, // full frame
		{42, 84},     // ARP: padded to 60
		{60, 84},
		{61, 85},
	} {
		if got := WireBytes(c.n); got != c.want {
			t.Errorf("WireBytes(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	// A GSO frame of 4 UDP datagrams of 1470 (headers 42): charged as 4
	// frames of 1512 + 24.
	if wire, segs := gsoWireBytes(42+4*1470, 42, 1470); wire != 4*1536 || segs != 4 {
		t.Errorf("gsoWireBytes = %d, %d segments, want %d, 4", wire, segs, 4*1536)
	}
}

// TestScheduleBurstAfterIdle: 45 full frames arriving together leave one
// wire time apart, the last 45 × 1538 × 8 / rate after the arrival (the
// first fragment of a 65,500-byte ping is no earlier than a real wire's).
func TestScheduleBurstAfterIdle(t *testing.T) {
	s := schedule{rate: 100e6, limit: (20 * time.Millisecond).Nanoseconds()}
	const t0 = int64(1e9)
	var last int64
	for i := 0; i < 45; i++ {
		d, ok := s.admit(t0, 1538)
		if !ok {
			t.Fatalf("frame %d dropped", i)
		}
		if want := t0 + int64(i+1)*123040; d != want {
			t.Fatalf("frame %d departs at +%d ns, want +%d", i, d-t0, want-t0)
		}
		last = d
	}
	if last-t0 != 45*123040 {
		t.Fatalf("burst took %d ns, want %d", last-t0, 45*123040)
	}
}

// TestScheduleLateAndQueue: a frame arriving after idle starts from its
// arrival; one that would wait longer than the limit is dropped and
// leaves the schedule as it was.
func TestScheduleLateAndQueue(t *testing.T) {
	s := schedule{rate: 100e6, limit: 1e6} // 1 ms queue: 8 frames of 1538
	n := 0
	for {
		if _, ok := s.admit(0, 1538); !ok {
			break
		}
		n++
	}
	if n != 8 {
		t.Fatalf("%d frames admitted into a 1 ms queue, want 8", n)
	}
	last := s.last
	if d, ok := s.admit(5e6, 1538); !ok || d != int64(5e6+123040) {
		t.Fatalf("after idle: depart %d ok %v, want %d", d, ok, int64(5e6+123040))
	}
	if s.idle != int64(5e6)-last {
		t.Fatalf("idle %d, want %d", s.idle, int64(5e6)-last)
	}
	u := schedule{}
	if d, ok := u.admit(7, 1538); !ok || d != 7 {
		t.Fatalf("unshaped: depart %d, want the arrival", d)
	}
}

// ipv4Frame returns an Ethernet frame with an IPv4 header (TTL ttl, valid
// checksum) to dst and n bytes of UDP payload.
func ipv4Frame(dst netip.Addr, ttl byte, n int) []byte {
	f := make([]byte, 14+20+8+n)
	binary.BigEndian.PutUint16(f[12:], etherIPv4)
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, ttl, 17
	binary.BigEndian.PutUint16(ip[2:], uint16(20+8+n))
	copy(ip[12:16], []byte{198, 18, 0, 1})
	a := dst.As4()
	copy(ip[16:20], a[:])
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip[:20]))
	return f
}

func ipChecksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i < len(h); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

func TestDecTTLIPv4(t *testing.T) {
	dst := netip.MustParseAddr("198.18.0.2")
	for _, ttl := range []byte{64, 2, 255, 128} {
		f := ipv4Frame(dst, ttl, 100)
		if got := destination(f); got != dst {
			t.Fatalf("destination %v, want %v", got, dst)
		}
		if !decTTL(f) {
			t.Fatalf("TTL %d: refused", ttl)
		}
		if f[22] != ttl-1 {
			t.Fatalf("TTL %d became %d", ttl, f[22])
		}
		if c := ipChecksum(f[14:34]); c != 0 {
			t.Fatalf("TTL %d: header checksum wrong after the decrement (residue %#x)", ttl, c)
		}
		if hl := headerLen(f); hl != 42 {
			t.Fatalf("headerLen %d, want 42", hl)
		}
	}
	if decTTL(ipv4Frame(dst, 1, 10)) {
		t.Fatal("TTL 1 forwarded")
	}
}

func TestDecTTLIPv6(t *testing.T) {
	dst := netip.MustParseAddr("2001:2::2")
	f := make([]byte, 14+40+20)
	binary.BigEndian.PutUint16(f[12:], etherIPv6)
	f[14], f[20], f[21] = 0x60, 6, 64
	f[54+12] = 5 << 4 // TCP data offset 20
	a := dst.As16()
	copy(f[38:54], a[:])
	if got := destination(f); got != dst {
		t.Fatalf("destination %v, want %v", got, dst)
	}
	if !decTTL(f) || f[21] != 63 {
		t.Fatalf("hop limit %d, want 63", f[21])
	}
	if hl := headerLen(f); hl != 74 {
		t.Fatalf("headerLen %d, want 74", hl)
	}
	f[21] = 1
	if decTTL(f) {
		t.Fatal("hop limit 1 forwarded")
	}
}

func TestDestinationIgnoresOthers(t *testing.T) {
	arp := make([]byte, 42)
	binary.BigEndian.PutUint16(arp[12:], 0x0806)
	for _, f := range [][]byte{arp, {1, 2, 3}, make([]byte, 20)} {
		if d := destination(f); d.IsValid() {
			t.Errorf("destination of a non-IP frame: %v", d)
		}
	}
}

func TestValidate(t *testing.T) {
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 1}
	ok := Link{Name: "a>b", In: "x", Out: "y", DstMAC: mac, Dst: []netip.Addr{netip.MustParseAddr("198.18.0.2")}}
	if err := (Config{Links: []Link{ok}}).Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []Config{
		{},
		{Links: []Link{ok}, Latency: -1},
		{Links: []Link{{Name: "x", Out: "y", DstMAC: mac, Dst: ok.Dst}}},
		{Links: []Link{{Name: "x", In: "x", Out: "y", DstMAC: mac[:3], Dst: ok.Dst}}},
		{Links: []Link{{Name: "x", In: "x", Out: "y", DstMAC: mac}}},
	}
	for i, c := range bad {
		if c.Validate() == nil {
			t.Errorf("config %d accepted", i)
		}
	}
}
