package linerate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// Fragment is one frame on the medium (result.LineFragment: the type
// calc's document shows).
type Fragment = result.LineFragment

// Breakdown is what the medium allows for a steady stream of equal
// datagrams of one payload size (result.LineBreakdown).
type Breakdown = result.LineBreakdown

// Analyze works out what medium m allows for payload bytes per datagram on
// stack s. For aggregating USB classes every transfer is taken to carry
// Aggregate frames of the same size (exact when datagrams are not
// fragmented).
func Analyze(m Medium, s Stack, payload int) (Breakdown, error) {
	if m.BitRate <= 0 {
		return Breakdown{}, fmt.Errorf("medium %q has no bit rate", m.Name)
	}
	if err := s.Validate(payload); err != nil {
		return Breakdown{}, fmt.Errorf("checking payload against the stack: %w", err)
	}
	ipData := payload + s.TransportHeader()
	sizes := s.fragments(ipData)
	b := Breakdown{Medium: m.Name, Stack: s.String(), Payload: payload, Transport: s.TransportHeader(), IPData: ipData}
	for _, n := range sizes {
		f := m.frame(s, n, len(sizes) > 1)
		b.Fragments = append(b.Fragments, f)
		b.FrameBytes += f.FrameBytes
		b.WireBytes += f.WireBytes
	}
	b.WireBits = b.WireBytes * 8
	b.WireTime = b.WireBits / m.BitRate
	if !(b.WireTime > 0) || math.IsInf(1/b.WireTime, 0) {
		// Only a custom medium with no overhead and no minimum frame
		// carrying nothing gets here: a rate of zero-byte frames is not
		// a figure.
		return Breakdown{}, fmt.Errorf("a %d-byte payload costs %v bytes on medium %q: nothing to time on the wire", payload, b.WireBytes, m.Name)
	}
	b.PacketsPerSecond, b.Limit = 1/b.WireTime, "line rate"
	if m.MaxFPS > 0 && b.PacketsPerSecond*float64(len(sizes)) > m.MaxFPS {
		b.PacketsPerSecond, b.Limit = m.MaxFPS/float64(len(sizes)), "frame rate cap"
	}
	b.FramesPerSecond = b.PacketsPerSecond * float64(len(sizes))
	b.GoodputBPS = b.PacketsPerSecond * float64(payload) * 8
	b.Efficiency = b.GoodputBPS / m.BitRate
	b.Steps = steps(m, s, b)
	return b, nil
}

// frame builds the frame carrying n bytes of IP data.
func (m Medium) frame(s Stack, n int, fragmented bool) Fragment {
	f := Fragment{IPData: n, IPHeader: s.ipHeader()}
	if fragmented && s.IPv6 {
		f.IPHeader += IPv6FragHeader
	}
	l3 := n + f.IPHeader
	switch m.Kind {
	case Custom:
		f.Encap = float64(m.Overhead)
		f.Pad = max(0, m.MinFrame-l3-m.Overhead)
		f.FrameBytes = float64(l3 + m.Overhead + f.Pad)
		f.WireBytes = f.FrameBytes
		return f
	}
	f.L2Header, f.FCS = m.Header, m.FCS
	if s.VLAN {
		f.L2Header += VLANTag
	}
	f.Pad = max(0, m.MinFrame-l3-f.L2Header-f.FCS)
	eth := l3 + f.L2Header + f.FCS + f.Pad
	if m.Kind == USB {
		m.usbFrame(&f, eth)
		return f
	}
	f.Preamble, f.Gap = m.Preamble, m.Gap
	f.FrameBytes = float64(eth)
	f.WireBytes = float64(eth + f.Preamble + f.Gap)
	return f
}

// usbFrame fills in the USB share of a frame of eth bytes.
func (m Medium) usbFrame(f *Fragment, eth int) {
	k := max(1, m.Aggregate)
	t := m.transfer(eth, k)
	b := m.Bus
	packets := (t + b.MaxPacket - 1) / b.MaxPacket
	if t%b.MaxPacket == 0 {
		f.ZLP = true
		packets++
	}
	kf := float64(k)
	f.Encap = float64(t-k*eth) / kf
	f.FrameBytes = float64(t) / kf
	f.BusPackets = float64(packets) / kf
	if b.SlotsPerSecond > 0 {
		f.WireBytes = float64(packets*b.MaxPacket) / kf
	} else {
		f.WireBytes = float64(t+packets*b.PacketOverhead) / kf
	}
}

// NCM header sizes: NTH16 is 12 bytes; NDP16 is 8 bytes plus a 4-byte
// (index, length) pointer per datagram and a zero pointer ending the list.
const (
	nth16       = 12
	ndp16       = 8
	ndpPointer  = 4
	eemHeader   = 2
	rndisHeader = 44
	ncmAlign    = 4
)

// transfer is the length of a USB transfer carrying k frames of eth bytes.
func (m Medium) transfer(eth, k int) int {
	switch m.Class {
	case EEM:
		return k * (eemHeader + eth)
	case RNDIS:
		return k * (rndisHeader + eth)
	case NCM:
		return align(nth16+ndp16+ndpPointer*(k+1), ncmAlign) + (k-1)*align(eth, ncmAlign) + eth
	}
	return eth
}

func align(n, a int) int { return (n + a - 1) / a * a }

// steps writes the derivation of b in plain words.
func steps(m Medium, s Stack, b Breakdown) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	ip := "IPv4"
	if s.IPv6 {
		ip = "IPv6"
	}
	if s.Transport == Raw {
		add("%d bytes of L2 payload (no IP or transport header counted)", b.Payload)
	} else {
		add("%d bytes %s payload + %d bytes %s header = %d bytes of %s data", b.Payload, strings.ToUpper(s.Transport.String()), b.Transport, strings.ToUpper(s.Transport.String()), b.IPData, ip)
		n := len(b.Fragments)
		if n == 1 {
			add("%d bytes of %s data fit in 1 %s packet (MTU %d)", b.IPData, ip, ip, s.mtu())
		} else {
			add("%d bytes of %s data need %d %s packets (MTU %d; every fragment but the last carries a multiple of 8): %s", b.IPData, ip, n, ip, s.mtu(), groupSizes(b.Fragments))
		}
	}
	at := 0
	for _, g := range group(overheadOnly(b.Fragments)) {
		line := fmt.Sprintf("%s: %s = %s bytes of overhead", plural(g.n, "packet"), overheadWords(m, g.f), num(g.f.Overhead()))
		if m.Kind == USB {
			line += "; " + usbWords(m, b.Fragments[at])
		}
		add("%s", line)
		at += g.n
	}
	add("on the wire: %d + %s = %s bytes = %s bits", b.IPData, overheadSum(b.Fragments), num(b.WireBytes), num(b.WireBits))
	add("at %s that takes %s: %s datagrams/s, %s frames/s", MediumRate(m.BitRate), timeWords(b.WireTime), num2(1/b.WireTime), num2(float64(len(b.Fragments))/b.WireTime))
	if b.Limit != "line rate" {
		add("the medium allows at most %s frames/s: %s datagrams/s", num2(m.MaxFPS), num2(b.PacketsPerSecond))
	}
	add("goodput = %d bytes × 8 × %s/s = %s; wire efficiency %.2f %%", b.Payload, num2(b.PacketsPerSecond), rateWords(b.GoodputBPS), b.Efficiency*100)
	return out
}

type fragGroup struct {
	n int
	f Fragment
}

// group folds runs of identical fragments together.
func group(fs []Fragment) []fragGroup {
	var out []fragGroup
	for _, f := range fs {
		if len(out) > 0 && out[len(out)-1].f == f {
			out[len(out)-1].n++
			continue
		}
		out = append(out, fragGroup{1, f})
	}
	return out
}

// overheadOnly strips the IP data so fragments group by their overhead.
func overheadOnly(fs []Fragment) []Fragment {
	out := make([]Fragment, len(fs))
	for i, f := range fs {
		f.WireBytes -= float64(f.IPData)
		f.FrameBytes -= float64(f.IPData)
		f.IPData = 0
		out[i] = f
	}
	return out
}

func groupSizes(fs []Fragment) string {
	var parts []string
	for _, g := range group(fs) {
		parts = append(parts, fmt.Sprintf("%d × %d", g.n, g.f.IPData))
	}
	return strings.Join(parts, " + ") + " bytes"
}

func overheadSum(fs []Fragment) string {
	var parts []string
	for _, g := range group(overheadOnly(fs)) {
		parts = append(parts, fmt.Sprintf("%d × %s", g.n, num(g.f.Overhead())))
	}
	return strings.Join(parts, " + ")
}

func overheadWords(m Medium, f Fragment) string {
	var parts []string
	add := func(v float64, what string) {
		if v != 0 {
			parts = append(parts, num(v)+" "+what)
		}
	}
	add(float64(f.IPHeader), "IP header")
	add(float64(f.L2Header), "Ethernet header")
	add(float64(f.FCS), "FCS")
	add(float64(f.Pad), "padding")
	add(float64(f.Preamble), "preamble+SFD")
	add(float64(f.Gap), "inter-frame gap")
	if m.Kind == Custom {
		add(f.Encap, "medium overhead")
	}
	if m.Kind == USB {
		add(f.Encap, m.Class.String()+" framing")
		if m.Bus.SlotsPerSecond > 0 {
			add(f.WireBytes-f.FrameBytes, "unused bus slot space")
		} else {
			add(f.WireBytes-f.FrameBytes, "USB packet framing")
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " + ")
}

func usbWords(m Medium, f Fragment) string {
	k := max(1, m.Aggregate)
	t := f.FrameBytes * float64(k)
	zlp := ""
	if f.ZLP {
		zlp = ", the last a zero-length packet because the transfer is a multiple of " + fmt.Sprint(m.Bus.MaxPacket)
	}
	cost := fmt.Sprintf("each a slot of %d bytes", m.Bus.MaxPacket)
	if m.Bus.SlotsPerSecond == 0 {
		cost = fmt.Sprintf("each with %d bytes of framing", m.Bus.PacketOverhead)
	}
	return fmt.Sprintf("%s per %s transfer of %s bytes: %s bus packets (%s)%s", plural(k, "frame"), m.Bus.Name, num(t), num(f.BusPackets*float64(k)), cost, zlp)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// num prints a byte count: whole numbers without decimals.
func num(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.2f", v)
}

func num2(v float64) string { return fmt.Sprintf("%.2f", v) }

// rateWords prints a bit rate with an SI prefix and two decimals.
func rateWords(bps float64) string {
	for _, p := range []struct {
		div    float64
		prefix string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if bps >= p.div {
			return fmt.Sprintf("%.2f %sbit/s", bps/p.div, p.prefix)
		}
	}
	return fmt.Sprintf("%.0f bit/s", bps)
}

// timeWords prints seconds in the most readable unit.
func timeWords(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.3f s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.3f ms", s*1e3)
	}
	return fmt.Sprintf("%.3f µs", s*1e6)
}

// MediumRate prints a medium's bit rate exactly, like "100 Mbit/s" or
// "425.984 Mbit/s".
func MediumRate(bps float64) string {
	for _, p := range []struct {
		div    float64
		prefix string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if bps >= p.div {
			return strconv.FormatFloat(bps/p.div, 'f', -1, 64) + " " + p.prefix + "bit/s"
		}
	}
	return strconv.FormatFloat(bps, 'f', -1, 64) + " bit/s"
}
