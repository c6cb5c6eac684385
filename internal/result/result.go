// Package result is the versioned result model every part of wirebench
// shares: what a test was asked to do, what each interval measured, what the
// sender sent and what the receiver counted, and the warnings that say when a
// figure cannot be trusted. It has no dependencies beyond the standard
// library, so stores, reports and the web dashboard can all read it.
//
// The JSON form is a contract documented in docs/json.md. Keys are only ever
// added within one schema version; a change of meaning bumps Schema.
package result

import (
	"encoding/json"
	"time"
)

// Schema is the value of the "schema" key of every JSON document wirebench
// writes (test results, ping, probe, latency, calc, loopback); the "kind"
// key says which document it is.
const Schema = "wirebench/1"

// KindTest is the "kind" of a test result (this package's Result).
const KindTest = "test"

// Protocol names used in Test.Protocol.
const (
	TCP = "tcp"
	UDP = "udp"
)

// Direction names used in Test.Direction. They are seen from the side that
// produced the result: a client that sends is "send", the server receiving
// that test is "receive".
const (
	DirSend    = "send"    // this side sent, the peer received
	DirReceive = "receive" // this side received, the peer sent
	DirBidir   = "bidir"   // both at once
)

// Result is one test, as seen from the side that produced it.
type Result struct {
	Schema  string `json:"schema"`
	Kind    string `json:"kind"` // KindTest
	Role    string `json:"role"` // "client" or "server"
	Version string `json:"version,omitempty"`
	// RunID is the id the results store saved this run as, in the
	// printed document only (left out when the run was not saved).
	RunID     int64      `json:"run_id,omitempty"`
	StartedAt time.Time  `json:"started_at"`
	Test      Test       `json:"test"`
	Intervals []Interval `json:"intervals"`
	// Sender is present when this side sent traffic.
	Sender *Sender `json:"sender,omitempty"`
	// Receiver is present when some side received traffic and its counts are
	// known: counted here, or taken from the peer's report (see Source).
	Receiver *Receiver `json:"receiver,omitempty"`
	// Reverse holds the counts of a second, opposite flow of the same test
	// (iperf2 -d/-r connect-back, --full-duplex, bidir), when there is one.
	Reverse *Flow `json:"reverse,omitempty"`
	// Streams holds per-stream figures when Test.Streams > 1.
	Streams []Stream `json:"streams,omitempty"`
	// Link puts the figures against the line rate of the medium, when a
	// medium was named.
	Link *Link `json:"link,omitempty"`
	// CPU is this process's CPU use over the test, and the peer's where it
	// reports it; nil when the platform cannot say.
	CPU *CPU `json:"cpu,omitempty"`
	// Diagnoses are findings about the path in plain words, with their
	// evidence: for example that arrivals follow a timer tick rather than
	// the bandwidth of the link (see Link.Diagnosis when a medium is named).
	Diagnoses []string `json:"diagnoses,omitempty"`
	// Warnings say in plain words why a figure above should not be trusted
	// as it stands. An empty list means nothing suspicious was seen.
	Warnings []string `json:"warnings"`
	// Error is set when the test ended early; the figures above are then the
	// partial ones gathered up to that point.
	Error string `json:"error,omitempty"`
	// Device is what the device under test printed about the same test
	// on its own shell (--dut); nil when no device was driven.
	Device *Device `json:"device,omitempty"`
}

// Test describes what was asked of the test, after defaults were applied.
type Test struct {
	Protocol  string `json:"protocol"`
	Direction string `json:"direction"`
	Dialect   string `json:"dialect"`
	// DialectChosenBy says how the dialect was chosen: "flag"
	// (--dialect), "port" (5001: iperf2, 5201: iperf3), "probe" (the peer's
	// answer), "fallback" (the probe could not tell: iperf2) or "device"
	// (--dut); empty when not recorded. DialectReason says what the probe saw.
	DialectChosenBy string  `json:"dialect_chosen_by,omitempty"`
	DialectReason   string  `json:"dialect_reason,omitempty"`
	Host            string  `json:"host"`
	Port            int     `json:"port"`
	Peer            string  `json:"peer,omitempty"` // address:port of the peer as seen on the wire
	Duration        float64 `json:"duration_s"`     // requested duration; 0 when Bytes is set
	// Omit is -O: the seconds at the start of the test left out of the
	// summary (the test runs Omit + Duration seconds); 0 when none.
	Omit        float64 `json:"omit_s,omitempty"`
	Bytes       int64   `json:"bytes,omitempty"`
	RateBPS     float64 `json:"rate_bps"` // requested UDP rate in bit/s of payload; 0 = unpaced
	RatePPS     float64 `json:"rate_pps,omitempty"`
	Length      int     `json:"length"`
	Streams     int     `json:"streams"`
	Mode        string  `json:"mode,omitempty"` // "", "reverse", "full-duplex", "dual", "tradeoff"
	PeerVersion string  `json:"peer_version,omitempty"`
	// Socket records the socket options asked for (-w, -M, -N, -S, -T,
	// -B/--cport) and the buffer sizes the kernel reported; nil when none.
	Socket *Socket `json:"socket,omitempty"`
}

// Interval is one reporting interval summed over all streams of a flow.
type Interval struct {
	Start         float64 `json:"start_s"`
	End           float64 `json:"end_s"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Packets       int64   `json:"packets"`
	Lost          int64   `json:"lost"`
	OutOfOrder    int64   `json:"out_of_order"`
	Duplicates    int64   `json:"duplicates"`
	JitterMS      float64 `json:"jitter_ms"`
	// Flow tells which flow the interval belongs to when a test has two
	// ("forward" or "reverse"); empty for single-flow tests.
	Flow string `json:"flow,omitempty"`
	// Omitted marks an interval within the -O period at the start of the
	// test: shown, but left out of the summary.
	Omitted bool `json:"omitted,omitempty"`
	// TCP is what the kernel reported of this side's sending TCP
	// connections at the end of the interval, when it reports it.
	TCP *TCPInfo `json:"tcp,omitempty"`
	// MeasuredBy is MeasuredBySender for an interval of what this side
	// sent: a sender measures no loss, reordering, duplicates or jitter,
	// so its JSON carries none of lost, out_of_order, duplicates and
	// jitter_ms (rather than zeros nobody measured). Empty: a receiver's.
	MeasuredBy string `json:"measured_by,omitempty"`
	// NoReceiverKeys is set when a decoded interval carried no lost or no
	// jitter_ms key (or null) without being marked MeasuredBySender: a
	// sender's interval of a document written before the mark, whose
	// Lost and JitterMS are then no measured 0. It is never written.
	NoReceiverKeys bool `json:"-"`
}

// MeasuredBySender marks a sender's interval (Interval.MeasuredBy).
const MeasuredBySender = "sender"

// MarshalJSON writes the interval, without the receiver's figures when
// it is a sender's (MeasuredBy).
func (in Interval) MarshalJSON() ([]byte, error) {
	type plain Interval
	if in.MeasuredBy != MeasuredBySender {
		return json.Marshal(plain(in))
	}
	// The outer fields hide the embedded ones of the same key, and being
	// nil they are left out.
	return json.Marshal(struct {
		plain
		Lost       *int64   `json:"lost,omitempty"`
		OutOfOrder *int64   `json:"out_of_order,omitempty"`
		Duplicates *int64   `json:"duplicates,omitempty"`
		JitterMS   *float64 `json:"jitter_ms,omitempty"`
	}{plain: plain(in)})
}

// UnmarshalJSON reads the interval, telling absent receiver figures
// (NoReceiverKeys) from measured zeros.
func (in *Interval) UnmarshalJSON(b []byte) error {
	type plain Interval
	// The outer fields hide the embedded ones of the same key.
	var v struct {
		plain
		Lost     *int64   `json:"lost"`
		JitterMS *float64 `json:"jitter_ms"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*in = Interval(v.plain)
	in.Lost, in.JitterMS = deref(v.Lost), deref(v.JitterMS)
	in.NoReceiverKeys = (v.Lost == nil || v.JitterMS == nil) && in.MeasuredBy != MeasuredBySender
	return nil
}

// deref is *p, or the zero value where p is nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// TCPInfo is what the kernel reports of a TCP sender's connections (Linux
// TCP_INFO), summed over the streams of a flow. It is absent, never zero,
// where the system does not report it.
type TCPInfo struct {
	// Retransmits counts segments sent again: in the interval, or over
	// the whole test in a summary.
	Retransmits int64 `json:"retransmits"`
	// CwndBytes is the congestion window in bytes (segments × MSS),
	// summed over the streams.
	CwndBytes int64 `json:"snd_cwnd_bytes"`
	// RTTMicros and RTTVarMicros are the smoothed round-trip time and its
	// variation in µs (the largest stream's).
	RTTMicros    int64 `json:"rtt_us"`
	RTTVarMicros int64 `json:"rttvar_us"`
	// MSS is the maximum segment size in use (the smallest stream's) and
	// PMTU the path MTU.
	MSS  int `json:"mss"`
	PMTU int `json:"pmtu"`
}

// Sender is what this side sent.
type Sender struct {
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Packets       int64   `json:"packets"`
	Seconds       float64 `json:"seconds"`
	// SendErrors counts writes the kernel refused (ENOBUFS and the like).
	SendErrors int64 `json:"send_errors,omitempty"`
	// Pacing says how a paced UDP sender's thread was scheduled here:
	// real-time and its bounds, or normal priority and why (empty for
	// TCP, an unpaced send or one not made here).
	Pacing string `json:"pacing,omitempty"`
	// PacketsPerSecond is Packets/Seconds for UDP.
	PacketsPerSecond float64 `json:"packets_per_second,omitempty"`
	// Basis says what a TCP sender's Bytes count: "acknowledged" (bytes
	// the peer acknowledged, over the time until the last of them was
	// acknowledged) or "written" (bytes written to the socket, where the
	// system does not report acknowledgements). Empty for UDP.
	Basis string `json:"basis,omitempty"`
	// BytesWritten is what a TCP sender wrote, when it differs from Bytes
	// (the peer had not acknowledged all of it when the wait ended).
	BytesWritten int64 `json:"bytes_written,omitempty"`
	// TCP is the kernel's view of a TCP sender's connections at the end
	// (retransmits over the whole test), when the system reports it.
	TCP *TCPInfo `json:"tcp,omitempty"`
	// LocalDrops counts datagrams this host dropped on its send path after
	// the send call had accepted them (a full egress qdisc, the egress
	// interface): they never reached the wire, yet the receiver counts
	// them lost. nil when the counters could not be read (UDP client only).
	LocalDrops *int64 `json:"local_drops,omitempty"`
	// LocalDropCounters are the host counters LocalDrops comes from.
	LocalDropCounters *LocalDropCounters `json:"local_drop_counters,omitempty"`
	// Behind says where the time a paced UDP sender of ours spent behind
	// its schedule went (our UDP client; nil for others).
	Behind *SenderBehind `json:"behind,omitempty"`
}

// SenderBehind is where the time a paced sender spent behind its schedule
// went: waiting inside send calls, while this host's egress queue (its
// qdisc, a shaper, the interface) held the datagrams the socket's send
// buffer had room for, or outside them, when the sender's thread did not
// run when a datagram was due (a stall).
type SenderBehind struct {
	// InSendS is the time behind schedule spent inside send calls,
	// StalledS the time behind schedule outside them, MaxStallMS the
	// longest such stretch. Summed over streams.
	InSendS    float64 `json:"in_send_seconds"`
	StalledS   float64 `json:"stalled_seconds"`
	MaxStallMS float64 `json:"max_stall_ms"`
	// InSendRunDelayS is the part of InSendS the sender's thread was
	// ready to run but waited for a CPU (Linux schedstat); nil where it
	// cannot be read. It counts as stalled.
	InSendRunDelayS *float64 `json:"in_send_run_delay_seconds,omitempty"`
	// AskedBPS is the rate asked, in payload bits per second.
	AskedBPS float64 `json:"asked_bits_per_second"`
	// QueueHeld says the sender offered less than asked because this
	// host's egress queue took no more: it was behind in send calls, and
	// stalled for at most 1 % of the sending time, so the queue and the
	// wire after it stayed busy. The sender's rate is then the rate the
	// link (or a shaper on it) took: a finding, not a fault of the sender.
	QueueHeld bool `json:"queue_held,omitempty"`
	// TakenBPS is, for a sender QueueHeld, the rate the queue took (in
	// payload bits per second) while it held the sender back, over TakenS
	// seconds: from the first send call that ended behind schedule to the
	// last, when the socket's buffer was about as full, so it leaves out
	// the datagrams that filled the buffer and the queue at the start,
	// which make the sender's rate over the whole test a little higher.
	TakenBPS float64 `json:"taken_bits_per_second,omitempty"`
	TakenS   float64 `json:"taken_seconds,omitempty"`
}

// LocalDropCounters are the changes of this host's send-path drop counters
// over a test. They are host-wide: other traffic at the same time counts
// too.
type LocalDropCounters struct {
	// QdiscDrops is the rise of the drop counter of the root qdisc (kind
	// Qdisc) of Interface, the one the route to the peer leaves by, and
	// TxDropped that of the interface's tx_dropped; nil when not readable.
	// Sender.LocalDrops is their sum.
	QdiscDrops *int64 `json:"qdisc_drops,omitempty"`
	TxDropped  *int64 `json:"tx_dropped,omitempty"`
	Interface  string `json:"interface,omitempty"`
	Qdisc      string `json:"qdisc,omitempty"`
	// SndbufErrors is the rise of the UDP (or UDP6) SndbufErrors counter of
	// this network namespace; nil when not readable. Reported, not counted
	// as drops: it also rises each time a send finds the send buffer full
	// and is retried, which loses nothing.
	SndbufErrors *int64 `json:"sndbuf_errors,omitempty"`
	// NotAvailable says why a counter could not be read.
	NotAvailable string `json:"not_available,omitempty"`
}

// Merge adds another stream's figures to t: retransmits and windows add
// up, the RTT is the larger, the MSS the smaller.
func (t *TCPInfo) Merge(o *TCPInfo) {
	if t.MSS == 0 || o.MSS < t.MSS {
		t.MSS = o.MSS
	}
	t.Retransmits += o.Retransmits
	t.CwndBytes += o.CwndBytes
	t.RTTMicros = max(t.RTTMicros, o.RTTMicros)
	t.RTTVarMicros = max(t.RTTVarMicros, o.RTTVarMicros)
	t.PMTU = max(t.PMTU, o.PMTU)
}

// What a peer report's datagram total counts (Receiver.Counting).
const (
	// CountingHighestID: the highest id seen, the answered FIN's |id|
	// (iperf 2's "Total"); received = total − lost.
	CountingHighestID = "highest-id"
	// CountingReceived: the datagrams received (old zperf's "received
	// packets"); total = received + lost.
	CountingReceived = "received"
)

// Jitter methods (Receiver.JitterMethod).
const (
	JitterPerDatagram = "per-datagram"
	JitterPerBatch    = "per-batch"
)

// Sender bases (Sender.Basis).
const (
	BasisAcknowledged = "acknowledged"
	BasisWritten      = "written"
)

// Receiver is what the receiving side counted.
type Receiver struct {
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Packets       int64   `json:"packets"`
	Lost          int64   `json:"lost"`
	OutOfOrder    int64   `json:"out_of_order"`
	// Duplicates counts datagrams whose sequence number had already
	// arrived; nil (absent, printed "-") when unknown: a peer's report that
	// does not carry it (iperf 2, iperf3, zperf) is not a count of 0.
	Duplicates *int64  `json:"duplicates,omitempty"`
	JitterMS   float64 `json:"jitter_ms"`
	// JitterMethod says how a local UDP receiver's JitterMS was obtained:
	// JitterPerDatagram from each datagram's own arrival time, or
	// JitterPerBatch when UDP receive offload (GRO) was on, under which the
	// datagrams the kernel coalesced share one arrival time. Empty when
	// the counts came from the peer, whose method is not reported.
	JitterMethod string  `json:"jitter_method,omitempty"`
	Seconds      float64 `json:"seconds"`
	// FirstByteSeconds is, for TCP counted here, the time from the
	// receive's start (the request sent, the connection accepted) to its
	// first byte read: the peer's own start and one trip across the path,
	// which Seconds includes; absent when unknown.
	FirstByteSeconds float64 `json:"first_byte_s,omitempty"`
	// Total is the number of datagrams the receiver expected (iperf's
	// "Total"): the highest sequence number seen, the FIN included.
	Total int64 `json:"total,omitempty"`
	// Source says where these counts come from: "local" (this side
	// received) or "peer-report" (the peer's server report).
	Source string `json:"source"`
	// Counting says what a peer report's datagram total meant, as told from
	// our own sent count: CountingHighestID (iperf 2, new zperf) or
	// CountingReceived (old zperf); absent when counted here or unknown.
	Counting string `json:"counting,omitempty"`
	// HostDrops counts datagrams our own socket receive buffer dropped
	// during the test (Linux SO_RXQ_OVFL); -1 when unknown. With UDP GRO
	// (JitterMethod JitterPerBatch) the kernel counts a dropped coalesced
	// packet once, so it is then a lower bound.
	HostDrops int64 `json:"host_drops,omitempty"`
	// PathLost is Lost minus the sender's LocalDrops (never below 0): the
	// loss left for the path, when the sender could read its drop
	// counters.
	PathLost *int64 `json:"path_lost,omitempty"`
	// PacketsPerSecond is Packets/Seconds for UDP.
	PacketsPerSecond float64 `json:"packets_per_second,omitempty"`
	// Intervals are the receiver's own per-interval counts, when the peer
	// that received is a wirebench that reported them (iperf3 control
	// protocol with wirebench's extension keys).
	Intervals []Interval `json:"intervals,omitempty"`
	// Transit is the receiver's summary of one-way transit times, from
	// each datagram's kernel receive time and its sender's timestamp: when
	// counted here (UDP, iperf2 dialect), or from a wirebench server's
	// report. Nil when nobody measured it (any other peer).
	Transit *Transit `json:"transit_us,omitempty"`
}

// NoteFirstByte keeps the earlier of r's FirstByteSeconds and s, where 0
// in either is unknown.
func (r *Receiver) NoteFirstByte(s float64) {
	if s > 0 && (r.FirstByteSeconds == 0 || s < r.FirstByteSeconds) {
		r.FirstByteSeconds = s
	}
}

// Transit summarises one-way transit times (receive time minus the
// sender's timestamp) in µs. The values include the offset between the
// sender's and the receiver's clocks: they are one-way delays only when
// both ends read the same clock (one host, or a lab on it); otherwise only
// their differences from Min, the delay variation, mean anything.
type Transit struct {
	Min   int64 `json:"min"`
	P50   int64 `json:"p50"`
	P90   int64 `json:"p90"`
	P99   int64 `json:"p99"`
	P999  int64 `json:"p99_9"`
	Max   int64 `json:"max"`
	Count int64 `json:"count"`
}

// Flow is the summary of one direction of a two-flow test.
type Flow struct {
	Direction string     `json:"direction"`
	Sender    *Sender    `json:"sender,omitempty"`
	Receiver  *Receiver  `json:"receiver,omitempty"`
	Intervals []Interval `json:"intervals,omitempty"`
	// ListenPort is the port a flow the peer opened towards us (an iperf 2
	// connect-back, -r/-d) arrived at.
	ListenPort int `json:"listen_port,omitempty"`
	// Warnings are those of the test's Warnings that are about this flow
	// alone (its own counts, its connection), where the session can tell.
	Warnings []string `json:"warnings,omitempty"`
}

// Stream is one stream's share of a multi-stream test.
type Stream struct {
	ID       int       `json:"id"`
	Sender   *Sender   `json:"sender,omitempty"`
	Receiver *Receiver `json:"receiver,omitempty"`
	// Flow is "reverse" for a stream of the Reverse flow of a two-flow
	// test; empty for the main flow's streams.
	Flow string `json:"flow,omitempty"`
}

// Link places the measured goodput against what the medium allows.
type Link struct {
	Medium string `json:"medium"`
	// TheoreticalBPS is the highest goodput the medium allows for this
	// payload size and protocol stack.
	TheoreticalBPS float64 `json:"theoretical_bps"`
	// PercentOfTheoretical is the receiver goodput as a share of it.
	PercentOfTheoretical float64 `json:"percent_of_theoretical"`
	FramesPerSecond      float64 `json:"frames_per_second"`
	// WireL2BPS and WireL1BPS are the measured rate counted with frame
	// headers (L2) and with preamble and gap as well (L1).
	WireL2BPS float64 `json:"wire_l2_bps"`
	WireL1BPS float64 `json:"wire_l1_bps"`
	// Diagnosis is a plain-words explanation when the figures look limited
	// by something other than bandwidth (for example a timer tick).
	Diagnosis string `json:"diagnosis,omitempty"`
	// Status judges the figure against the medium: "ok", or "suspect" when
	// it is more than 0.1 % above what the medium allows (no path made of
	// it can carry that); Reason then says why in words. Absent in
	// documents from before this judgement.
	Status string `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// New returns a Result with the schema set and empty lists ready, so the
// JSON form always carries "intervals" and "warnings" as arrays.
func New(role string) *Result {
	return &Result{Schema: Schema, Kind: KindTest, Role: role, Intervals: []Interval{}, Warnings: []string{}, StartedAt: time.Now().UTC()}
}

// Count returns a pointer to v, for counts that are absent when unknown.
func Count(v int64) *int64 { return &v }

// Warn appends a warning.
func (r *Result) Warn(msg string) { r.Warnings = append(r.Warnings, msg) }

// AddReverse sets f (nil when the flow never came) as r's reverse flow,
// with the warnings said of it alone: they join r's Warnings and, when f
// came, are kept on f too, so that a reader of one flow (a matrix's -r
// download cell) can tell them from the main flow's.
func (r *Result) AddReverse(f *Flow, warnings []string) {
	r.Reverse = f
	r.Warnings = append(r.Warnings, warnings...)
	if f != nil && len(warnings) > 0 {
		f.Warnings = append([]string(nil), warnings...)
	}
}

// Socket is what was asked of this side's data sockets, and what the kernel
// reported back.
type Socket struct {
	RequestedBuffer int `json:"requested_buffer,omitempty"` // -w, bytes
	// SendBuffer and ReceiveBuffer are SO_SNDBUF and SO_RCVBUF as getsockopt
	// reports them after -w (Linux reports double the size it granted).
	SendBuffer    int    `json:"send_buffer,omitempty"`
	ReceiveBuffer int    `json:"receive_buffer,omitempty"`
	MSS           int    `json:"mss,omitempty"` // -M: TCP_MAXSEG asked for
	TOS           *int   `json:"tos,omitempty"` // -S: IP_TOS / IPV6_TCLASS
	TTL           int    `json:"ttl,omitempty"` // -T: IP_TTL / IPV6_UNICAST_HOPS
	NoDelay       bool   `json:"nodelay,omitempty"`
	Bind          string `json:"bind,omitempty"` // -B / --cport: local address of the first stream
}

// CPU is the CPU time a process used over a test. Percentages are of one
// core over the test's wall-clock time (200 = two cores busy throughout),
// as iperf3's cpu_util; the process's figure covers everything it did in
// that time (a server running tests at once shares one figure among them).
type CPU struct {
	UserSeconds   float64 `json:"user_s"`
	SystemSeconds float64 `json:"system_s"`
	Percent       float64 `json:"percent"`
	UserPercent   float64 `json:"user_percent"`
	SystemPercent float64 `json:"system_percent"`
	// OtherTests is how many other tests this process ran while this one
	// ran (a server's overlapping tests): the figures above are the
	// process's and count their CPU too. 0: this test ran alone.
	OtherTests int `json:"other_tests,omitempty"`
	// Remote is the peer's own figure, as it reported it (iperf3's
	// cpu_util_total/user/system); nil when the peer reports none.
	Remote *RemoteCPU `json:"remote,omitempty"`
}

// RemoteCPU is the CPU use a peer reported for its process.
type RemoteCPU struct {
	Percent       float64 `json:"percent"`
	UserPercent   float64 `json:"user_percent"`
	SystemPercent float64 `json:"system_percent"`
}
