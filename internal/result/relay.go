package result

// Kinds of the lab's closing documents (Relay).
const (
	KindRelay   = "relay"
	KindReflect = "reflect"
)

// RelayCounts is what one direction of a relay (or a reflector) did.
type RelayCounts struct {
	// In is every datagram received; Forwarded the ones sent on (each once,
	// however many copies); Dropped the ones the model dropped. In =
	// Forwarded + Dropped once the run has ended.
	In        int64 `json:"in"`
	Forwarded int64 `json:"forwarded"`
	Dropped   int64 `json:"dropped"`
	// Duplicated were sent twice, Corrupted with one bit flipped.
	Duplicated int64 `json:"duplicated"`
	Corrupted  int64 `json:"corrupted"`
	// DroppedBy splits Dropped by the part of the model that dropped them
	// (loss, burst, max, rate_queue, service_queue, tick_queue).
	DroppedBy map[string]int64 `json:"dropped_by"`
	// SendErrors counts sends the kernel refused (the datagram is lost
	// although the model forwarded it).
	SendErrors int64 `json:"send_errors"`
	// MaxGapMS is the longest time between two datagrams received, in
	// milliseconds: a sender that stalled (a loaded host) shows here, and a
	// rate-limiting stage whose queue ran dry meanwhile lost those ticks.
	MaxGapMS float64 `json:"max_arrival_gap_ms"`
	// Data counts only iperf2-layout data datagrams (id above 0) and, on
	// a relay's forward direction, each test's FIN as its receiver counts
	// it (the relay counts a FIN as its receiver does).
	Data RelayDataCounts `json:"data"`
}

// RelayDataCounts is RelayCounts for iperf2 data datagrams, to check a test's own
// loss, out-of-order and duplicate counts against exactly.
type RelayDataCounts struct {
	In         int64 `json:"in"`
	Forwarded  int64 `json:"forwarded"`
	Dropped    int64 `json:"dropped"`
	Reordered  int64 `json:"reordered"` // really sent after a datagram of its flow with a higher id
	Duplicated int64 `json:"duplicated"`
	Corrupted  int64 `json:"corrupted"`
}

// Relay is the closing document of a relay or reflector run (kind
// KindRelay or KindReflect; docs/lab.md).
type Relay struct {
	Schema   string  `json:"schema"`
	Kind     string  `json:"kind"`
	Listen   string  `json:"listen"`
	To       string  `json:"to,omitempty"`
	Model    string  `json:"model"`
	Seed     uint64  `json:"seed"`
	Both     bool    `json:"both,omitempty"`
	Duration float64 `json:"duration_s"`
	Flows    int     `json:"flows,omitempty"`
	// Datagrams and Data are the forward direction (client → target) of a
	// relay, or everything a reflector received.
	Datagrams RelayCounts     `json:"datagrams"`
	Data      RelayDataCounts `json:"data"`
	// Reverse is the target → client direction of a relay.
	Reverse *RelayCounts `json:"reverse,omitempty"`
	// TCP is what the TCP proxy did (relay --tcp).
	TCP *RelayTCPCounts `json:"tcp,omitempty"`
	// Warnings say when a count cannot be taken at face value.
	Warnings []string `json:"warnings"`
}

// RelayTCPCounts is what a relay's TCP proxy did (relay --tcp).
type RelayTCPCounts struct {
	Connections int64 `json:"connections"`
	Failed      int64 `json:"failed"` // connections the target refused
	// BytesForward and BytesReverse are stream bytes client → target and
	// target → client.
	BytesForward int64 `json:"bytes_forward"`
	BytesReverse int64 `json:"bytes_reverse"`
}
