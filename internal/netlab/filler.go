package netlab

import "fmt"

// FillLink is one shaped veth end whose bucket a filler keeps empty while
// the wire idles (Config.Wire = WireFilled): the namespace and interface
// of its HTB tree.
type FillLink struct {
	NS     string `json:"ns"`
	Ifname string `json:"ifname"`
}

// FillStats is what a filler did on one link: how often it emptied the
// wire's bucket because the lab's traffic had left the wire idle.
type FillStats struct {
	NS     string `json:"ns"`
	Ifname string `json:"ifname"`
	Idles  uint64 `json:"idles"`
	// Errors counts changes of the bucket (or waits for traffic) that
	// failed; LastError is the last one's text.
	Errors    uint64 `json:"errors,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

// String describes the counters in one line.
func (s FillStats) String() string {
	out := fmt.Sprintf("%s %s: bucket emptied for idle %d times", s.NS, s.Ifname, s.Idles)
	if s.Errors > 0 {
		out += fmt.Sprintf(", %d failed changes (last: %s)", s.Errors, s.LastError)
	}
	return out
}

// FillEtherType is IEEE 802's Local Experimental EtherType 1, which no
// host in a lab sends: a filler's packet socket is bound to it while it
// should see nothing (the filler frames of before issue 38 carried it).
const FillEtherType = 0x88b5
