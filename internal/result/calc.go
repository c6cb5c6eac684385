package result

// KindCalc is the "kind" of calc's document (Calc).
const KindCalc = "calc"

// Calc is calc's document (KindCalc), documented in docs/calc.md:
// what media carry for a list of sizes.
type Calc struct {
	Schema  string       `json:"schema"`
	Kind    string       `json:"kind"`
	Stack   CalcStack    `json:"stack"`
	Media   []CalcMedium `json:"media"`
	Results []CalcResult `json:"results"`
}

// CalcStack is the protocol stack calc's figures assume.
type CalcStack struct {
	IP            string `json:"ip"` // "ipv4", "ipv6", or "" for raw
	Protocol      string `json:"protocol"`
	TCPTimestamps bool   `json:"tcp_timestamps"`
	VLAN          bool   `json:"vlan"`
	MTU           int    `json:"mtu"`
}

// CalcMedium describes one medium of calc's document.
type CalcMedium struct {
	Name          string  `json:"name"`
	Kind          string  `json:"kind"`
	BitRateBPS    float64 `json:"bit_rate_bps"`
	BusCeilingBPS float64 `json:"bus_ceiling_bps,omitempty"`
	Class         string  `json:"class,omitempty"`
	Aggregate     int     `json:"aggregate"`
	MaxFPS        float64 `json:"max_fps,omitempty"`
	Source        string  `json:"source"`
}

// CalcResult is one medium and payload size of calc's document.
type CalcResult struct {
	// Size is the size as typed: the payload, or the frame with --frame.
	Size int `json:"size"`
	LineBreakdown
	Echo *CalcEcho `json:"echo,omitempty"`
	// Measured, with --measured, is a figure the user brought placed on
	// this medium and payload.
	Measured *CalcMeasured `json:"measured,omitempty"`
}

// CalcMeasured is a measured figure (--measured) placed against what the
// medium allows for the result's payload: its share, the rates it implies
// and what else it fits.
type CalcMeasured struct {
	// AsTyped is the figure as given: a bit rate of goodput ("83.6M") or
	// datagrams per second ("7000pps").
	AsTyped    string  `json:"as_typed"`
	GoodputBPS float64 `json:"goodput_bps"`
	// PercentOfTheoretical is GoodputBPS as a share of the result's
	// GoodputBPS, in percent.
	PercentOfTheoretical float64 `json:"percent_of_theoretical"`
	PacketsPerSecond     float64 `json:"packets_per_second"`
	FramesPerSecond      float64 `json:"frames_per_second"`
	// WireL2BPS and WireL1BPS count the figure's traffic with its frame
	// headers, and with preamble and gap (USB: whole bus packets).
	WireL2BPS float64 `json:"wire_l2_bps"`
	WireL1BPS float64 `json:"wire_l1_bps"`
	// Suspect, when not empty, says why the figure is more than the
	// medium can carry.
	Suspect string `json:"suspect,omitempty"`
	// Fits lists what else would give this figure; empty when nothing
	// does.
	Fits []CalcFit `json:"fits"`
}

// CalcFit is one thing that would give a measured figure: a timer tick
// moving a whole number of datagrams per tick ("tick"), or another
// medium's ceiling ("medium").
type CalcFit struct {
	Kind string `json:"kind"`
	// TickS and PerTick, for a tick: its period in seconds and the
	// datagrams moved per tick.
	TickS   float64 `json:"tick_s,omitempty"`
	PerTick int     `json:"per_tick,omitempty"`
	// Medium and its TheoreticalBPS, for a medium: the one whose ceiling
	// for this payload the figure is close to.
	Medium         string  `json:"medium,omitempty"`
	TheoreticalBPS float64 `json:"theoretical_bps,omitempty"`
	// PacketsPerSecond is the rate the fit gives exactly (a tick); for a
	// medium, its datagrams/s at most.
	PacketsPerSecond float64 `json:"packets_per_second"`
	// OffPercent is how far the figure is from the fit, in percent of the
	// fit (negative: the figure is below it).
	OffPercent float64 `json:"off_percent"`
}

// CalcEcho is the ICMP echo view: the count that leaves out the inter-frame
// gap (a common miscount) and the correct one.
type CalcEcho struct {
	RoundTripWireS       float64 `json:"round_trip_wire_s"`
	NoGapBytes           float64 `json:"no_gap_bytes"`
	NoGapOverhead        float64 `json:"no_gap_overhead_per_packet"`
	WireBytes            float64 `json:"wire_bytes"`
	WireOverhead         float64 `json:"wire_overhead_per_packet"`
	RTTS                 float64 `json:"rtt_s,omitempty"`
	ImpliedNoGapBPS      float64 `json:"implied_no_gap_bps,omitempty"`
	ImpliedBPS           float64 `json:"implied_bps,omitempty"`
	ImpliedShareOfMedium float64 `json:"implied_share_of_medium,omitempty"`
}

// LineFragment is one frame on a medium: an IP packet (or fragment) with
// every byte the layers below add to it. USB figures are the frame's share
// of a transfer carrying Medium.Aggregate frames, so some are fractional.
type LineFragment struct {
	IPData     int     `json:"ip_data"`     // IP payload bytes (the transport header is in the first fragment)
	IPHeader   int     `json:"ip_header"`   // IP header, with the IPv6 fragment header when fragmented
	L2Header   int     `json:"l2_header"`   // Ethernet header, with the 802.1Q tag when on
	FCS        int     `json:"fcs"`         // frame check sequence
	Pad        int     `json:"pad"`         // padding up to the minimum frame
	Preamble   int     `json:"preamble"`    // preamble + SFD
	Gap        int     `json:"gap"`         // inter-frame gap
	Encap      float64 `json:"encap"`       // USB class headers (and ZLP-free alignment) per frame, or the custom overhead
	BusPackets float64 `json:"bus_packets"` // USB packets per frame, a ZLP included
	ZLP        bool    `json:"zlp"`         // the transfer ends with a zero-length packet
	// FrameBytes is the L2 size: the bytes handed to the medium.
	FrameBytes float64 `json:"frame_bytes"`
	// WireBytes is the L1 size: the line time the frame takes, in bytes at
	// Medium.BitRate (Ethernet adds preamble and gap; USB counts packets).
	WireBytes float64 `json:"wire_bytes"`
}

// Overhead is every wire byte that is not IP data.
func (f LineFragment) Overhead() float64 { return f.WireBytes - float64(f.IPData) }

// LineBreakdown is what a medium allows for a steady stream of equal
// datagrams (or TCP segments, or echo requests) of one payload size.
type LineBreakdown struct {
	Medium    string `json:"medium"`
	Stack     string `json:"stack"`
	Payload   int    `json:"payload"`          // application bytes per datagram
	Transport int    `json:"transport_header"` // transport header bytes
	IPData    int    `json:"ip_data"`          // payload + transport header
	// Fragments lists every frame one datagram becomes.
	Fragments []LineFragment `json:"fragments"`
	// FrameBytes and WireBytes are the L2 and L1 bytes of one datagram.
	FrameBytes float64 `json:"frame_bytes"`
	WireBytes  float64 `json:"wire_bytes"`
	WireBits   float64 `json:"wire_bits"`
	// WireTime is the line time of one datagram in seconds.
	WireTime float64 `json:"wire_time_s"`
	// PacketsPerSecond is datagrams (segments, echoes) per second at most.
	PacketsPerSecond float64 `json:"packets_per_second"`
	FramesPerSecond  float64 `json:"frames_per_second"`
	// GoodputBPS is the highest application payload rate in bit/s.
	GoodputBPS float64 `json:"goodput_bps"`
	// Efficiency is GoodputBPS / the medium's bit rate, 0 to 1.
	Efficiency float64 `json:"efficiency"`
	// Limit says what bounds the rate: "line rate" or "frame rate cap".
	Limit string `json:"limit"`
	// Steps is the derivation in plain words, one line each.
	Steps []string `json:"steps"`
}
