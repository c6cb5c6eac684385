package result

import (
	"encoding/json"
	"fmt"
	"math"
	"net"
	"time"
)

// KindPing is the "kind" of a ping run's document (Ping, docs/ping.md).
const KindPing = "ping"

// Ping is a ping run's document (schema wirebench/1, kind KindPing): the
// run, and each size's median RTT as a rate on the medium (--medium).
type Ping struct {
	Schema string `json:"schema"`
	Kind   string `json:"kind"`
	// RunID is the id the results store saved this run as (left out
	// when it was not saved).
	RunID int64 `json:"run_id,omitempty"`
	*PingRun
	Implied []PingImplied `json:"implied,omitempty"`
	// Warnings: only the results store's, when it could not be written.
	Warnings []string `json:"warnings,omitempty"`
}

// PingImplied is one size's median RTT as a bit rate on the medium.
type PingImplied struct {
	Size           int      `json:"size"`
	Medium         string   `json:"medium"`
	MediumBPS      float64  `json:"medium_bps"`
	Fragments      int      `json:"fragments"`
	WireBytes      float64  `json:"wire_bytes"`
	NoGapBytes     float64  `json:"no_gap_bytes"`
	RoundTripWireS float64  `json:"round_trip_wire_s"`
	RTTP50S        float64  `json:"rtt_p50_s"`
	ImpliedBPS     float64  `json:"implied_bps"`
	ImpliedNoGap   float64  `json:"implied_no_gap_bps"`
	Share          float64  `json:"implied_share_of_medium"`
	Steps          []string `json:"steps"`
	Error          string   `json:"error,omitempty"`
}

// PingSocketKind names the kind of ICMP socket in use.
type PingSocketKind string

// Socket kinds.
const (
	PingSocketAuto         PingSocketKind = ""             // try raw, then unprivileged
	PingSocketRaw          PingSocketKind = "raw"          // ip4:icmp / ip6:ipv6-icmp
	PingSocketUnprivileged PingSocketKind = "unprivileged" // udp4 / udp6 ICMP datagram socket
)

// Timestamp sources recorded in PingSocket.RxTimestamps and TxTimestamps.
const (
	// PingTimestampKernel: receive times from SO_TIMESTAMPNS; transmit times
	// from SO_TIMESTAMPING (when the first IP packet of an echo request
	// entered the host's queueing layer, after the payload was copied).
	PingTimestampKernel = "kernel"
	// PingTimestampUser: time.Now right after the receive call returned, or
	// right before the send call.
	PingTimestampUser = "userspace"
)

// PingSocket says what socket the pinger got and what it can do.
type PingSocket struct {
	Kind    PingSocketKind `json:"kind"`
	Network string         `json:"network"` // as given to icmp.ListenPacket: "ip4:icmp", "udp4", …
	// Source is the address or interface the socket is bound to (-I);
	// "" when it is bound to neither.
	Source string `json:"source,omitempty"`
	// ID is the echo identifier the kernel puts on our requests for an
	// unprivileged socket (the socket's "port"); 0 for raw sockets, where
	// the pinger chooses it.
	ID int `json:"-"`
	// RxTimestamps is PingTimestampKernel when receive times come from the
	// kernel, else PingTimestampUser.
	RxTimestamps string `json:"rx_timestamps"`
	// RxTimestampsWhy says why kernel timestamps are not in use.
	RxTimestampsWhy string `json:"rx_timestamps_why,omitempty"`
	// TxTimestamps is PingTimestampKernel when the socket asked the kernel for
	// transmit timestamps, else PingTimestampUser. Whether each probe got one
	// is counted per size (PingSize.KernelTx).
	TxTimestamps string `json:"tx_timestamps"`
	// TxTimestampsWhy says why kernel transmit timestamps are not in use.
	TxTimestampsWhy string `json:"tx_timestamps_why,omitempty"`
	// DF is whether the don't-fragment setting can be controlled.
	DF bool `json:"df_supported"`
	// CountsDrops is whether the socket reports the messages it drops
	// for want of receive buffer (SO_RXQ_OVFL).
	CountsDrops bool `json:"counts_drops"`
}

// PingRTT summarizes round-trip times. All zero when there are no samples.
type PingRTT struct {
	Min  time.Duration
	Avg  time.Duration
	Max  time.Duration
	Mdev time.Duration // population standard deviation, as iputils prints it
	P50  time.Duration
	P90  time.Duration
	P99  time.Duration
}

// PingSize is what one payload size measured. Received counts intact
// replies that came within the timeout; corrupt and late replies are
// counted apart and not in Received, so they count as loss.
type PingSize struct {
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
	KernelTx int     `json:"rtt_from_kernel_tx"`
	RTT      PingRTT `json:"rtt_ms"`
	// Samples are the round-trip times of the intact, timely replies.
	Samples []time.Duration `json:"-"`
}

// MarshalJSON writes the RTT figures in milliseconds.
func (r PingRTT) MarshalJSON() ([]byte, error) {
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
func (r *PingRTT) UnmarshalJSON(b []byte) error {
	var ms struct{ Min, Avg, Max, Mdev, P50, P90, P99 float64 }
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	d := func(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }
	*r = PingRTT{Min: d(ms.Min), Avg: d(ms.Avg), Max: d(ms.Max), Mdev: d(ms.Mdev), P50: d(ms.P50), P90: d(ms.P90), P99: d(ms.P99)}
	return nil
}

// PingRun is a whole ping run.
type PingRun struct {
	Target  string     `json:"target"`
	Address net.IP     `json:"address"`
	Socket  PingSocket `json:"socket"`
	ID      int        `json:"id"`
	DF      bool       `json:"df"`
	// PathMTU is the path MTU towards the target as the route gives it;
	// 0 when unknown.
	PathMTU   int         `json:"path_mtu,omitempty"`
	Count     int         `json:"count"`
	Interval  float64     `json:"interval_s"`
	Timeout   float64     `json:"timeout_s"`
	StartedAt time.Time   `json:"started_at"`
	Sizes     []*PingSize `json:"sizes"`
	// Error is set when the run ended early (interrupted, socket failed);
	// the figures above are the partial ones.
	Error string `json:"error,omitempty"`
}

// PingNeedsFragmentation is the text given for a probe over the path MTU
// with don't-fragment set (a verdict's reason, the summary's note).
func PingNeedsFragmentation(mtu int) string {
	if mtu <= 0 {
		return "needs fragmentation (path MTU unknown)"
	}
	return fmt.Sprintf("needs fragmentation (path MTU %d)", mtu)
}
