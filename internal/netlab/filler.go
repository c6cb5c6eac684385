package netlab

import "fmt"

// FillLink is one shaped veth end whose idle wire time a filler uses up
// (Config.Wire = WireFilled): the namespace and interface it sends on and
// the length of its frames (FillFrame).
type FillLink struct {
	NS     string `json:"ns"`
	Ifname string `json:"ifname"`
	Frame  int    `json:"frame"`
}

// FillStats is what a filler did on one link: the filler frames it sent
// (bytes with the Ethernet header) and how often it went into deep idle
// (emptied the wire's bucket and stopped sending, see Filler).
type FillStats struct {
	NS     string `json:"ns"`
	Ifname string `json:"ifname"`
	Frames uint64 `json:"frames"`
	Bytes  uint64 `json:"bytes"`
	Idles  uint64 `json:"idles"`
	// Errors counts sends that failed (other than by waiting for the
	// wire) and changes of the bucket that did; LastError is the last
	// one's text.
	Errors    uint64 `json:"errors,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

// String describes the counters in one line.
func (s FillStats) String() string {
	out := fmt.Sprintf("%s %s: %d filler frames, %d bytes; %d deep idles", s.NS, s.Ifname, s.Frames, s.Bytes, s.Idles)
	if s.Errors > 0 {
		out += fmt.Sprintf(", %d failed sends or bucket changes (last: %s)", s.Errors, s.LastError)
	}
	return out
}

// FillEtherType is the filler frames' EtherType: IEEE 802's Local
// Experimental EtherType 1, which no host in a lab has a handler for, so
// the far end drops each frame as soon as it has read its header.
const FillEtherType = 0x88b5

// fillDst is the filler frames' destination: a locally administered
// unicast address no lab interface has.
var fillDst = [6]byte{0x02, 0x77, 0x62, 0x66, 0x69, 0x6c}

// fillPayload starts every filler frame's payload, for whoever captures
// one.
const fillPayload = "wirebench lab filler: wire time the lab's traffic left unused"
