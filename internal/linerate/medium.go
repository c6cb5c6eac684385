// Package linerate is wirebench's model of what a medium allows: the bytes
// every header, gap and bus packet adds to a datagram, and from them the
// highest goodput, frame rate and wire efficiency a link can reach for a
// given payload and protocol stack. Everything here is a pure function of
// its arguments; no I/O, no state.
//
// The media:
//
//   - Ethernet (eth10 … eth10g): preamble+SFD 8, header 14, optional
//     802.1Q tag 4, FCS 4, inter-frame gap 12, minimum frame 64 (padded).
//   - USB 2.0 High-Speed bulk (usb2-ecm, usb2-eem, usb2-ncm, usb2-rndis):
//     at most 13 bulk packets of 512 bytes per 125 µs microframe, 104,000
//     packet slots a second, a 53.248 MB/s (425.984 Mbit/s) ceiling. Every
//     packet takes one slot whatever its length, so a short packet or a
//     zero-length packet (ZLP) costs as much bus time as a full one.
//   - USB 3 SuperSpeed (Gen 1) bulk (usb3-…): 5 Gbit/s signalling, 8b/10b
//     coding leaves 4 Gbit/s (500 MB/s); each data packet of up to 1024
//     bytes carries 32 bytes of framing (a 16-byte data packet header with
//     its CRC-16 and link control word, 4 framing symbols before it, a
//     4-byte CRC-32 and 4 framing symbols after the data, and 4 start
//     symbols; USB 3.2 spec §7.2 and §8.2). That gives a ceiling of
//     1024/1056 × 4 Gbit/s = 3.879 Gbit/s. Link commands, SKP ordered sets,
//     flow control and host scheduling are not modelled; real controllers
//     reach 3.2–3.6 Gbit/s, so read the USB 3 figures as an upper bound.
//   - A custom medium: a bit rate, bytes added to every IP packet, a
//     minimum frame and a maximum frame rate.
//
// Analyze gives the breakdown of one payload size; Measured places a
// measured goodput against it.
package linerate

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the family of a medium.
type Kind int

// Media families.
const (
	Ethernet Kind = iota // IEEE 802.3 at some rate
	USB                  // Ethernet frames over a USB bulk pipe
	Custom               // user-described: rate, overhead, minimum frame, frame cap
)

// String names the family.
func (k Kind) String() string {
	switch k {
	case Ethernet:
		return "ethernet"
	case USB:
		return "usb"
	case Custom:
		return "custom"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Class is the USB communications class that carries Ethernet frames.
type Class int

// USB networking classes.
const (
	ECM   Class = iota + 1 // CDC-ECM: one frame per transfer, no header
	EEM                    // CDC-EEM: 2-byte header + frame + 4-byte CRC, k frames per transfer
	NCM                    // CDC-NCM: NTH16 + NDP16 per transfer, datagrams aligned to 4
	RNDIS                  // RNDIS: 44-byte REMOTE_NDIS_PACKET_MSG header per frame
)

// String names the class.
func (c Class) String() string {
	switch c {
	case ECM:
		return "cdc-ecm"
	case EEM:
		return "cdc-eem"
	case NCM:
		return "cdc-ncm"
	case RNDIS:
		return "rndis"
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// Bus describes a USB bulk pipe.
type Bus struct {
	Name string
	// MaxPacket is the bulk wMaxPacketSize: 512 (High-Speed), 1024 (SuperSpeed).
	MaxPacket int
	// SlotsPerSecond, when non-zero, makes every packet cost one fixed slot
	// of 1/SlotsPerSecond seconds whatever its length (USB 2.0 HS: 104,000).
	SlotsPerSecond float64
	// PacketOverhead is the framing added to each packet when packets cost
	// their length (SuperSpeed: 32 bytes).
	PacketOverhead int
	// SignalBPS is the coded data rate packets are clocked at when packets
	// cost their length (SuperSpeed: 4 Gbit/s after 8b/10b).
	SignalBPS float64
}

// Medium is a link type: its rate and the bytes it adds to every frame.
// Build one with LookupMedium; the zero value is not usable.
type Medium struct {
	Name string
	Kind Kind
	// BitRate is the rate, in bit/s, at which the medium's wire bytes (see
	// Fragment.WireBytes) are clocked: the nominal Ethernet rate, the custom
	// rate; for USB 2.0 HS 425.984 Mbit/s, where every packet slot counts as
	// 512 bytes; for USB 3 SuperSpeed 4 Gbit/s, where every packet counts its
	// length plus 32 bytes of framing. Goodput never exceeds it.
	BitRate float64

	// Ethernet framing (Ethernet and USB, which carry Ethernet frames).
	Preamble int // preamble + SFD: 8 on Ethernet, 0 on USB
	Header   int // destination, source, EtherType: 14
	FCS      int // 4 on Ethernet and CDC-EEM, 0 on the other USB classes
	Gap      int // inter-frame gap: 12 on Ethernet
	MinFrame int // smallest frame, header to FCS, padded up to: 64 on Ethernet

	// Overhead is the custom medium's per-frame overhead in bytes.
	Overhead int
	// MaxFPS caps frames per second; 0 means no cap beyond the bit rate.
	MaxFPS float64

	// USB carriage.
	Bus       *Bus
	Class     Class
	Aggregate int // frames per USB transfer (EEM, NCM, RNDIS); 1 otherwise

	// Source says where the numbers come from and what is assumed.
	Source string
}

// ErrUnknownMedium is returned by LookupMedium for a name it does not know.
var ErrUnknownMedium = errors.New("unknown medium")

func usb2() *Bus {
	return &Bus{Name: "USB 2.0 High-Speed bulk", MaxPacket: 512, SlotsPerSecond: 13 * 8000}
}

func usb3() *Bus {
	return &Bus{Name: "USB 3 SuperSpeed bulk", MaxPacket: 1024, PacketOverhead: 32, SignalBPS: 4e9}
}

// BusCeilingBPS is the highest payload rate of the bus in bit/s: every
// packet full.
func (b *Bus) BusCeilingBPS() float64 {
	if b.SlotsPerSecond > 0 {
		return b.SlotsPerSecond * float64(b.MaxPacket) * 8
	}
	return b.SignalBPS * float64(b.MaxPacket) / float64(b.MaxPacket+b.PacketOverhead)
}

const (
	srcEthernet = "IEEE 802.3: preamble+SFD 8, header 14, FCS 4, inter-frame gap 12, minimum frame 64"
	srcUSB2     = "USB 2.0 §5.8.4: at most 13 bulk packets of 512 bytes per 125 µs microframe; every packet, a zero-length one too, takes a slot"
	srcUSB3     = "USB 3.2 Gen 1: 5 Gbit/s, 8b/10b = 4 Gbit/s; 1024-byte packets + 32 bytes framing each; link commands and scheduling not modelled (upper bound)"
)

// MediumNames lists the names LookupMedium knows, in a stable order.
func MediumNames() []string {
	return []string{
		"eth10", "eth100", "eth1g", "eth2.5g", "eth5g", "eth10g",
		"usb2-ecm", "usb2-eem", "usb2-ncm", "usb2-rndis",
		"usb3-ecm", "usb3-eem", "usb3-ncm", "usb3-rndis",
		"custom:RATE,OVERHEAD,MINFRAME,MAXFPS",
	}
}

// LookupMedium returns the medium with the given name (see MediumNames).
// A custom medium is written "custom:RATE,OVERHEAD,MINFRAME,MAXFPS": RATE
// in bit/s with an optional k, M or G (SI) suffix, OVERHEAD the bytes added
// to every IP packet, MINFRAME the smallest frame (IP packet + overhead)
// and MAXFPS the frame rate cap (0 for none); the last two may be left out.
func LookupMedium(name string) (Medium, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if strings.HasPrefix(n, "custom:") {
		return parseCustom(strings.TrimSpace(name)[len("custom:"):])
	}
	eth := map[string]float64{"eth10": 10e6, "eth100": 100e6, "eth1g": 1e9, "eth2.5g": 2.5e9, "eth5g": 5e9, "eth10g": 10e9}
	if r, ok := eth[n]; ok {
		return Medium{Name: n, Kind: Ethernet, BitRate: r, Preamble: 8, Header: 14, FCS: 4, Gap: 12, MinFrame: 64, Aggregate: 1, Source: srcEthernet}, nil
	}
	bus, class, ok := strings.Cut(n, "-")
	var b *Bus
	var src string
	switch bus {
	case "usb2":
		b, src = usb2(), srcUSB2
	case "usb3":
		b, src = usb3(), srcUSB3
	}
	classes := map[string]Class{"ecm": ECM, "eem": EEM, "ncm": NCM, "rndis": RNDIS}
	c, cok := classes[class]
	if !ok || b == nil || !cok {
		return Medium{}, fmt.Errorf("%w %q: want one of %s", ErrUnknownMedium, name, strings.Join(MediumNames(), ", "))
	}
	rate := b.SignalBPS
	if b.SlotsPerSecond > 0 {
		rate = b.BusCeilingBPS()
	}
	m := Medium{Name: n, Kind: USB, BitRate: rate, Header: 14, Bus: b, Class: c, Aggregate: 1, Source: src}
	if c == EEM {
		m.FCS = 4 // EEM frames carry a CRC (or the 0xDEADBEEF sentinel)
	}
	return m, nil
}

func parseCustom(s string) (Medium, error) {
	parts := strings.Split(s, ",")
	if len(parts) < 2 || len(parts) > 4 {
		return Medium{}, fmt.Errorf("invalid custom medium %q: want custom:RATE,OVERHEAD[,MINFRAME[,MAXFPS]], like custom:100M,24,64,0", s)
	}
	rate, err := parseSI(parts[0])
	if err != nil || !(rate >= 1) || math.IsInf(rate, 0) {
		return Medium{}, fmt.Errorf("invalid custom medium rate %q: want a bit rate of at least 1 bit/s like 100M", parts[0])
	}
	nums := make([]float64, 3)
	names := []string{"overhead", "minimum frame", "maximum frames/s"}
	for i, p := range parts[1:] {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || (i < 2 && (v != math.Trunc(v) || v > 1<<20)) {
			return Medium{}, fmt.Errorf("invalid custom medium %s %q: want a non-negative whole number", names[i], p)
		}
		nums[i] = v
	}
	return Medium{
		Name: "custom:" + s, Kind: Custom, BitRate: rate,
		Overhead: int(nums[0]), MinFrame: int(nums[1]), MaxFPS: nums[2], Aggregate: 1,
		Source: "user-described medium",
	}, nil
}

// parseSI reads a number with an optional k, m or g suffix (powers of 1000).
func parseSI(s string) (float64, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	mult := 1.0
	if s != "" {
		switch s[len(s)-1] {
		case 'k':
			mult = 1e3
		case 'm':
			mult = 1e6
		case 'g':
			mult = 1e9
		}
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v*mult, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("parsing %q as a number: %w", s, strconv.ErrSyntax)
	}
	return v * mult, nil
}

// WithAggregate returns the medium carrying k frames per USB transfer.
// Only CDC-EEM, CDC-NCM and RNDIS aggregate; k = 1 is always allowed.
func (m Medium) WithAggregate(k int) (Medium, error) {
	switch {
	case k < 1 || k > 64:
		return m, fmt.Errorf("invalid aggregation %d: want 1 to 64 frames per transfer", k)
	case k > 1 && (m.Kind != USB || m.Class == ECM):
		return m, fmt.Errorf("medium %s cannot aggregate frames: only usb*-eem, usb*-ncm and usb*-rndis can", m.Name)
	}
	m.Aggregate = k
	return m, nil
}
