package ping

import (
	"encoding/json"
	"math"
	"net"
	"time"
)

// SizeResult is what one payload size measured. Received counts intact
// replies that came within the timeout; corrupt and late replies are
// counted apart and not in Received, so they count as loss.
type SizeResult struct {
	Size        int     `json:"size"`
	Fragments   int     `json:"fragments,omitempty"` // IP packets per echo on the path MTU
	Sent        int     `json:"sent"`
	Received    int     `json:"received"`
	LossPct     float64 `json:"loss_pct"`
	Corrupt     int     `json:"corrupt"`
	Duplicates  int     `json:"duplicates"`
	Late        int     `json:"late"`
	TooBig      int     `json:"needs_fragmentation,omitempty"`
	PathMTU     int     `json:"path_mtu,omitempty"` // the MTU reported with TooBig
	Unreachable int     `json:"unreachable,omitempty"`
	SendErrors  int     `json:"send_errors,omitempty"`
	Error       string  `json:"error,omitempty"` // the first send error
	// SocketDrops counts the messages our own socket dropped while this
	// size was measured (receive buffer full): replies lost on this host,
	// not on the network. Other ICMP traffic seen by a raw socket counts
	// too.
	SocketDrops int `json:"socket_drops,omitempty"`
	// KernelTx counts the Received replies whose RTT starts at the
	// kernel's transmit timestamp; the others start right before the send
	// call, as iputils ping times them.
	KernelTx int      `json:"rtt_from_kernel_tx"`
	RTT      RTTStats `json:"rtt_ms"`
	// Samples are the round-trip times of the intact, timely replies.
	Samples []time.Duration `json:"-"`
}

// finish computes the loss and RTT summary from the counts and samples.
func (s *SizeResult) finish() {
	if s.Sent > 0 {
		s.LossPct = 100 * float64(s.Sent-s.Received) / float64(s.Sent)
	}
	s.RTT = Summarize(s.Samples)
}

// MarshalJSON writes the RTT figures in milliseconds.
func (r RTTStats) MarshalJSON() ([]byte, error) {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return json.Marshal(struct {
		Min  float64 `json:"min"`
		Avg  float64 `json:"avg"`
		Max  float64 `json:"max"`
		Mdev float64 `json:"mdev"`
		P50  float64 `json:"p50"`
		P90  float64 `json:"p90"`
		P99  float64 `json:"p99"`
	}{ms(r.Min), ms(r.Avg), ms(r.Max), ms(r.Mdev), ms(r.P50), ms(r.P90), ms(r.P99)})
}

// UnmarshalJSON reads the milliseconds MarshalJSON writes, so a saved run
// decodes back to the figures it printed (to the nanosecond).
func (r *RTTStats) UnmarshalJSON(b []byte) error {
	var ms struct{ Min, Avg, Max, Mdev, P50, P90, P99 float64 }
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	d := func(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }
	*r = RTTStats{Min: d(ms.Min), Avg: d(ms.Avg), Max: d(ms.Max), Mdev: d(ms.Mdev), P50: d(ms.P50), P90: d(ms.P90), P99: d(ms.P99)}
	return nil
}

// Result is a whole ping run.
type Result struct {
	Target  string     `json:"target"`
	Address net.IP     `json:"address"`
	Socket  SocketInfo `json:"socket"`
	ID      int        `json:"id"`
	DF      bool       `json:"df"`
	// PathMTU is the path MTU towards the target as the route gives it;
	// 0 when unknown.
	PathMTU   int           `json:"path_mtu,omitempty"`
	Count     int           `json:"count"`
	Interval  float64       `json:"interval_s"`
	Timeout   float64       `json:"timeout_s"`
	StartedAt time.Time     `json:"started_at"`
	Sizes     []*SizeResult `json:"sizes"`
	// Error is set when the run ended early (interrupted, socket failed);
	// the figures above are the partial ones.
	Error string `json:"error,omitempty"`
}

// Event is one probe's outcome, reported as it happens.
type Event struct {
	Outcome Outcome
	Seq     int
	Size    int
	RTT     time.Duration // for replies, late replies, duplicates
	From    net.IP
	PathMTU int   // for OutcomeTooBig
	Err     error // for OutcomeSendError
	Kernel  bool  // RTT measured with a kernel receive timestamp
	// KernelTx: RTT measured from the kernel's transmit timestamp.
	KernelTx bool
	// CallRTT is the round trip from right before the send call, as
	// iputils ping times it; equal to RTT when KernelTx is false.
	CallRTT time.Duration
}
