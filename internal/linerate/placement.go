package linerate

import "fmt"

// Placement puts a measured goodput next to what the medium allows.
type Placement struct {
	Medium string `json:"medium"`
	// TheoreticalBPS is the highest goodput for this payload and stack.
	TheoreticalBPS float64 `json:"theoretical_bps"`
	// PercentOfTheoretical is the measured goodput as a share of it.
	PercentOfTheoretical float64 `json:"percent_of_theoretical"`
	// PacketsPerSecond and FramesPerSecond are the datagram and frame
	// rates the measured goodput implies (frames count IP fragments).
	PacketsPerSecond float64 `json:"packets_per_second"`
	FramesPerSecond  float64 `json:"frames_per_second"`
	// WireL2BPS counts the measured traffic with frame headers (and USB
	// class framing); WireL1BPS adds preamble and gap (USB: whole bus
	// packets), so it is the share of the line in use times BitRate.
	WireL2BPS float64 `json:"wire_l2_bps"`
	WireL1BPS float64 `json:"wire_l1_bps"`
}

// Measured places a measured goodput (application payload bit/s) of
// payload-byte datagrams on stack s against medium m.
func Measured(m Medium, s Stack, payload int, goodputBPS float64) (Placement, error) {
	if goodputBPS < 0 {
		return Placement{}, fmt.Errorf("invalid goodput %v: want zero or more bit/s", goodputBPS)
	}
	if payload <= 0 {
		return Placement{}, fmt.Errorf("invalid payload %d: want at least 1 byte to place a goodput", payload)
	}
	b, err := Analyze(m, s, payload)
	if err != nil {
		return Placement{}, fmt.Errorf("working out the theoretical goodput: %w", err)
	}
	pps := goodputBPS / (8 * float64(payload))
	return Placement{
		Medium:               m.Name,
		TheoreticalBPS:       b.GoodputBPS,
		PercentOfTheoretical: 100 * goodputBPS / b.GoodputBPS,
		PacketsPerSecond:     pps,
		FramesPerSecond:      pps * float64(len(b.Fragments)),
		WireL2BPS:            pps * b.FrameBytes * 8,
		WireL1BPS:            pps * b.WireBytes * 8,
	}, nil
}

// Excess explains a goodput above what the medium allows (more than 100 %
// of the theoretical figure), and is empty otherwise. No path made of the
// named medium can carry more, so either the traffic did not cross that
// medium (a faster link, a shortcut, the wrong --medium) or the figure
// itself is inflated; what is quoted names the figure and the medium.
func (p Placement) Excess(what string) string {
	if !(p.PercentOfTheoretical > 100) {
		return ""
	}
	return fmt.Sprintf("the %s goodput is %.2f %% of the %s %s can carry at most: more than the medium allows, so "+
		"either the path is not %s (a faster link, or the traffic did not cross it) or the figure is inflated "+
		"(e.g. bytes counted outside the measured time, or a clock running slow)",
		what, p.PercentOfTheoretical, fmtBPS(p.TheoreticalBPS), p.Medium, p.Medium)
}

// fmtBPS writes a bit rate in Mbit/s, or kbit/s below 1 Mbit/s.
func fmtBPS(bps float64) string {
	if bps < 1e6 {
		return fmt.Sprintf("%.2f kbit/s", bps/1e3)
	}
	return fmt.Sprintf("%.2f Mbit/s", bps/1e6)
}

// Echo is an ICMP echo exchange on one medium: a request and a reply of
// the same size, one after the other on the same link.
type Echo struct {
	Request Breakdown `json:"request"`
	// RoundTripWire is the line time of request plus reply, in seconds: the
	// shortest round trip the medium allows (store-and-forward hops and the
	// responder's own time come on top).
	RoundTripWire float64 `json:"round_trip_wire_s"`
	// NoGapBytes is the request counted without the inter-frame gap, the
	// way a VoIP box's bench counted it (IP data + IP header, Ethernet header,
	// preamble and FCS per packet); NoGapOverhead is that per-packet
	// overhead. Equal to the wire bytes on media without a gap.
	NoGapBytes    float64 `json:"no_gap_bytes"`
	NoGapOverhead float64 `json:"no_gap_overhead"`
}

// AnalyzeEcho works out the wire cost of an echo with payload bytes of
// ICMP data (what ping -s / -l sets) on stack s (its Transport is set to
// ICMP).
func AnalyzeEcho(m Medium, s Stack, payload int) (Echo, error) {
	s.Transport = ICMP
	b, err := Analyze(m, s, payload)
	if err != nil {
		return Echo{}, err
	}
	e := Echo{Request: b, RoundTripWire: 2 * b.WireTime}
	for _, f := range b.Fragments {
		e.NoGapBytes += f.WireBytes - float64(f.Gap)
	}
	first := b.Fragments[0]
	e.NoGapOverhead = first.Overhead() - float64(first.Gap)
	return e, nil
}

// ImpliedBPS is the rate at which bytes must cross the line in one
// direction for an echo to take rtt seconds, with request and reply each
// given half of it (that report's assumption).
func ImpliedBPS(bytes, rtt float64) float64 {
	if rtt <= 0 {
		return 0
	}
	return bytes * 8 / (rtt / 2)
}

// Judgements of a figure placed against a medium (result.Link.Status, a
// matrix cell's and a sweep point's status).
const (
	StatusOK      = "ok"
	StatusSuspect = "suspect"
)

// SuspectAbovePercent is the share of what the medium allows above which a
// figure is suspect: no path made of the medium can carry more, and 0.1 %
// leaves room for the clocks of two hosts, not for a figure the wire
// forbids.
const SuspectAbovePercent = 100.1

// AboveMedium explains, in words, a figure that is percent of what medium
// allows when that is above SuspectAbovePercent; empty otherwise. what
// names the figure ("receiver goodput", "rate").
func AboveMedium(what string, percent float64, medium string) string {
	if !(percent > SuspectAbovePercent) {
		return ""
	}
	return fmt.Sprintf("the %s is %.2f %% of what %s allows, more than the medium can carry (over %.1f %%): "+
		"the path is not %s (a faster link, a wrong --medium) or the figure is inflated", what, percent, medium, SuspectAbovePercent, medium)
}
