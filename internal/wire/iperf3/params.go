package iperf3

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Protocol is the transport a test uses.
type Protocol uint8

// Protocols. The zero value means "not said", which iperf3 treats as TCP.
const (
	ProtoUnset Protocol = iota
	ProtoTCP
	ProtoUDP
	ProtoSCTP
)

// String returns "tcp", "udp", "sctp" or "unset".
func (p Protocol) String() string {
	switch p {
	case ProtoTCP:
		return "tcp"
	case ProtoUDP:
		return "udp"
	case ProtoSCTP:
		return "sctp"
	}
	return "unset"
}

// ErrBadParams is wrapped by every parameter decoding or validation error.
var ErrBadParams = errors.New("bad iperf3 parameters")

// Params is the parameter JSON a client sends after PARAM_EXCHANGE
// (wire-protocols.md §4.2).
//
// Encoding follows iperf3's own client: omit, time, num, blockcount and
// parallel are always sent; every other key only when set (non-zero, true or
// non-empty). Boolean keys are sent as true (or 1 where iperf3 sends a
// number) and never as false, because servers treat a present key as set
// whatever its value.
//
// Decoding accepts every key iperf3 3.12–3.21 sends, takes boolean keys as set
// when present (whatever the value), accepts numbers in integer or float
// syntax, and ignores unknown keys.
type Params struct {
	Protocol       Protocol // "tcp" / "udp" / "sctp"
	Omit           int64    // "omit": seconds omitted at the start
	ServerAffinity *int64   // "server_affinity": CPU for the server, nil when not set
	Time           int64    // "time": test seconds (0 with -n / -k)
	Num            int64    // "num": bytes to send (-n), 0 when unused
	BlockCount     int64    // "blockcount": blocks to send (-k), 0 when unused
	MSS            int64    // "MSS"
	NoDelay        bool     // "nodelay"
	Parallel       int64    // "parallel": streams per direction
	Reverse        bool     // "reverse" (-R)
	Bidirectional  bool     // "bidirectional" (--bidir)
	Window         int64    // "window": socket buffer bytes
	Len            int64    // "len": block / datagram length in bytes
	Bandwidth      int64    // "bandwidth": bit/s per stream
	FQRate         int64    // "fqrate": bit/s fair-queue pacing
	PacingTimer    int64    // "pacing_timer": µs
	Burst          int64    // "burst"
	TOS            int64    // "TOS"
	FlowLabel      int64    // "flowlabel"
	Title          string   // "title"
	ExtraData      string   // "extra_data"
	Congestion     string   // "congestion"
	CongestionUsed string   // "congestion_used"
	// GetServerOutput asks the server to put its own report into its
	// results ("get_server_output").
	GetServerOutput  bool
	UDPCounters64Bit bool   // "udp_counters_64bit": 16-byte UDP header
	RepeatingPayload bool   // "repeating_payload"
	ZeroCopy         bool   // "zerocopy"
	DontFragment     bool   // "dont_fragment"
	AuthToken        string // "authtoken"
	ClientVersion    string // "client_version", e.g. "3.12"
	MPTCP            bool   // "mptcp" (3.19+)
	SkipRxCopy       bool   // "skip_rx_copy" (3.19+)
	GSO              bool   // "gso" (3.21+)
	GSODgSize        int64  // "gso_dg_size" (3.21+)
	GSOBfSize        int64  // "gso_bf_size" (3.21+)
	GRO              bool   // "gro" (3.21+)
	GROBfSize        int64  // "gro_bf_size" (3.21+)

	// WB is the wirebench extension; nil for plain iperf3 peers.
	WB *WBParams
}

// WBParams is the wirebench extension of the parameters. Its keys start with
// "wb_"; iperf3 servers ignore them. A wirebench server that sees wb_version
// answers with a WBResults in its results.
type WBParams struct {
	Version    int64  // "wb_version": extension version, WBVersion
	Agent      string // "wb_agent": e.g. "wirebench/0.1"
	IntervalMs int64  // "wb_interval_ms": receiver interval length wanted, 0 = none
	Duplicates bool   // "wb_dups": count duplicate UDP datagrams
	Latency    bool   // "wb_latency": report one-way latency from the UDP timestamps
	// AuthTime and AuthMAC prove knowledge of a shared secret (SecretMAC):
	// "wb_auth_ts" is the client's Unix time, "wb_auth" the hex MAC.
	AuthTime int64
	AuthMAC  string
	// Probe ("wb_probe") marks the 1 KiB test of `wirebench probe` and of
	// the client's --dialect auto: a wirebench server runs it and answers
	// as for any test, but neither announces, saves nor counts it (a
	// one-test server, -1, still waits for the real test).
	Probe bool
}

// WBVersion is the version of the wirebench extension this package speaks.
const WBVersion = 1

// paramsWire fixes key names, order and presence for encoding.
type paramsWire struct {
	TCP              *bool   `json:"tcp,omitempty"`
	UDP              *bool   `json:"udp,omitempty"`
	SCTP             *bool   `json:"sctp,omitempty"`
	Omit             int64   `json:"omit"`
	ServerAffinity   *int64  `json:"server_affinity,omitempty"`
	Time             int64   `json:"time"`
	Num              int64   `json:"num"`
	BlockCount       int64   `json:"blockcount"`
	MSS              int64   `json:"MSS,omitempty"`
	NoDelay          *bool   `json:"nodelay,omitempty"`
	Parallel         int64   `json:"parallel"`
	Reverse          *bool   `json:"reverse,omitempty"`
	Bidirectional    *bool   `json:"bidirectional,omitempty"`
	Window           int64   `json:"window,omitempty"`
	Len              int64   `json:"len,omitempty"`
	Bandwidth        int64   `json:"bandwidth,omitempty"`
	FQRate           int64   `json:"fqrate,omitempty"`
	PacingTimer      int64   `json:"pacing_timer,omitempty"`
	Burst            int64   `json:"burst,omitempty"`
	TOS              int64   `json:"TOS,omitempty"`
	FlowLabel        int64   `json:"flowlabel,omitempty"`
	Title            string  `json:"title,omitempty"`
	ExtraData        string  `json:"extra_data,omitempty"`
	Congestion       string  `json:"congestion,omitempty"`
	CongestionUsed   string  `json:"congestion_used,omitempty"`
	GetServerOutput  int64   `json:"get_server_output,omitempty"`
	UDPCounters64Bit int64   `json:"udp_counters_64bit,omitempty"`
	RepeatingPayload int64   `json:"repeating_payload,omitempty"`
	ZeroCopy         int64   `json:"zerocopy,omitempty"`
	DontFragment     int64   `json:"dont_fragment,omitempty"`
	MPTCP            *bool   `json:"mptcp,omitempty"`
	SkipRxCopy       int64   `json:"skip_rx_copy,omitempty"`
	GSO              int64   `json:"gso,omitempty"`
	GSODgSize        int64   `json:"gso_dg_size,omitempty"`
	GSOBfSize        int64   `json:"gso_bf_size,omitempty"`
	GRO              int64   `json:"gro,omitempty"`
	GROBfSize        int64   `json:"gro_bf_size,omitempty"`
	AuthToken        string  `json:"authtoken,omitempty"`
	ClientVersion    string  `json:"client_version,omitempty"`
	WBVersion        int64   `json:"wb_version,omitempty"`
	WBAgent          string  `json:"wb_agent,omitempty"`
	WBIntervalMs     int64   `json:"wb_interval_ms,omitempty"`
	WBDups           *bool   `json:"wb_dups,omitempty"`
	WBLatency        *bool   `json:"wb_latency,omitempty"`
	WBAuthTS         int64   `json:"wb_auth_ts,omitempty"`
	WBAuth           string  `json:"wb_auth,omitempty"`
	WBProbe          *bool   `json:"wb_probe,omitempty"`
	_                [0]byte // keep positional literals out
}

// trueOrNil returns a pointer to true when b, else nil (key omitted).
func trueOrNil(b bool) *bool {
	if !b {
		return nil
	}
	t := true
	return &t
}

// oneOrZero returns 1 when b: the numeric flags iperf3 sends as 1.
func oneOrZero(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// MarshalJSON encodes p following the presence rule (see Params).
func (p *Params) MarshalJSON() ([]byte, error) {
	w := paramsWire{
		TCP: trueOrNil(p.Protocol == ProtoTCP), UDP: trueOrNil(p.Protocol == ProtoUDP),
		SCTP: trueOrNil(p.Protocol == ProtoSCTP), Omit: p.Omit, ServerAffinity: p.ServerAffinity,
		Time: p.Time, Num: p.Num, BlockCount: p.BlockCount, MSS: p.MSS, NoDelay: trueOrNil(p.NoDelay),
		Parallel: p.Parallel, Reverse: trueOrNil(p.Reverse), Bidirectional: trueOrNil(p.Bidirectional),
		Window: p.Window, Len: p.Len, Bandwidth: p.Bandwidth, FQRate: p.FQRate,
		PacingTimer: p.PacingTimer, Burst: p.Burst, TOS: p.TOS, FlowLabel: p.FlowLabel,
		Title: p.Title, ExtraData: p.ExtraData, Congestion: p.Congestion, CongestionUsed: p.CongestionUsed,
		GetServerOutput: oneOrZero(p.GetServerOutput), UDPCounters64Bit: oneOrZero(p.UDPCounters64Bit),
		RepeatingPayload: oneOrZero(p.RepeatingPayload), ZeroCopy: oneOrZero(p.ZeroCopy),
		DontFragment: oneOrZero(p.DontFragment), MPTCP: trueOrNil(p.MPTCP),
		SkipRxCopy: oneOrZero(p.SkipRxCopy), GSO: oneOrZero(p.GSO), GSODgSize: p.GSODgSize,
		GSOBfSize: p.GSOBfSize, GRO: oneOrZero(p.GRO), GROBfSize: p.GROBfSize,
		AuthToken: p.AuthToken, ClientVersion: p.ClientVersion,
	}
	if p.WB != nil {
		w.WBVersion = max(p.WB.Version, 1)
		w.WBAgent = p.WB.Agent
		w.WBIntervalMs = p.WB.IntervalMs
		w.WBDups = trueOrNil(p.WB.Duplicates)
		w.WBLatency = trueOrNil(p.WB.Latency)
		w.WBAuthTS, w.WBAuth = p.WB.AuthTime, p.WB.AuthMAC
		w.WBProbe = trueOrNil(p.WB.Probe)
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encoding iperf3 parameters: %w", err)
	}
	return b, nil
}

// DecodeParams decodes a parameter JSON body (see Params for the rules).
func DecodeParams(body []byte) (*Params, error) {
	m, err := objectFields(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadParams, err)
	}
	f := &fieldReader{m: m}
	p := &Params{}
	switch {
	case f.has("udp"):
		p.Protocol = ProtoUDP
	case f.has("sctp"):
		p.Protocol = ProtoSCTP
	case f.has("tcp"):
		p.Protocol = ProtoTCP
	}
	p.Omit, _ = f.int64("omit")
	if v, ok := f.int64("server_affinity"); ok {
		p.ServerAffinity = &v
	}
	p.Time, _ = f.int64("time")
	p.Num, _ = f.int64("num")
	p.BlockCount, _ = f.int64("blockcount")
	p.MSS, _ = f.int64("MSS")
	p.NoDelay = f.has("nodelay")
	p.Parallel, _ = f.int64("parallel")
	p.Reverse = f.has("reverse")
	p.Bidirectional = f.has("bidirectional")
	p.Window, _ = f.int64("window")
	p.Len, _ = f.int64("len")
	p.Bandwidth, _ = f.int64("bandwidth")
	p.FQRate, _ = f.int64("fqrate")
	p.PacingTimer, _ = f.int64("pacing_timer")
	p.Burst, _ = f.int64("burst")
	p.TOS, _ = f.int64("TOS")
	p.FlowLabel, _ = f.int64("flowlabel")
	p.Title = f.string("title")
	p.ExtraData = f.string("extra_data")
	p.Congestion = f.string("congestion")
	p.CongestionUsed = f.string("congestion_used")
	p.GetServerOutput = f.has("get_server_output")
	p.UDPCounters64Bit = f.has("udp_counters_64bit")
	p.RepeatingPayload = f.has("repeating_payload")
	p.ZeroCopy = f.has("zerocopy")
	p.DontFragment = f.has("dont_fragment")
	p.AuthToken = f.string("authtoken")
	p.ClientVersion = f.string("client_version")
	p.MPTCP = f.has("mptcp")
	p.SkipRxCopy = f.has("skip_rx_copy")
	p.GSO = flagValue(f, "gso")
	p.GSODgSize, _ = f.int64("gso_dg_size")
	p.GSOBfSize, _ = f.int64("gso_bf_size")
	p.GRO = flagValue(f, "gro")
	p.GROBfSize, _ = f.int64("gro_bf_size")
	if v, ok := f.int64("wb_version"); ok {
		p.WB = &WBParams{Version: v, Agent: f.string("wb_agent"), Duplicates: f.has("wb_dups"), Latency: f.has("wb_latency")}
		p.WB.IntervalMs, _ = f.int64("wb_interval_ms")
		p.WB.AuthTime, _ = f.int64("wb_auth_ts")
		p.WB.AuthMAC = f.string("wb_auth")
		p.WB.Probe = f.has("wb_probe")
	}
	if f.err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadParams, f.err)
	}
	return p, nil
}

// flagValue reads a 3.21 numeric on/off key (gso, gro), which servers read by
// value rather than by presence: present and non-zero means on.
func flagValue(f *fieldReader, key string) bool {
	raw, ok := f.m[key]
	if !ok {
		return false
	}
	if v, err := parseInt64(raw); err == nil {
		return v != 0
	}
	return string(raw) == "true"
}

// Limits of iperf3 3.12 (iperf.h) that a server checks.
const (
	MaxStreams      = 128            // MAX_STREAMS
	MaxTime         = 86400          // MAX_TIME, seconds
	MaxBlockSize    = 1 << 20        // MAX_BLOCKSIZE (TCP)
	MaxUDPBlockSize = 65535 - 8 - 20 // MAX_UDP_BLOCKSIZE
	MinUDPBlockSize = 4 + 4 + 8      // MIN_UDP_BLOCKSIZE
	MaxOmit         = 60             // the -O limit of 3.12, seconds
)

// Validate checks p against iperf3 3.12's limits. The error wraps ErrBadParams
// and a *ServerErr with the i_errno iperf3 itself would use, so a server can
// answer with it (errors.As). SCTP is refused with ErrnoProtocol: wirebench
// does not implement it.
func (p *Params) Validate() error {
	bad := func(e Errno) error { return fmt.Errorf("%w: %w", ErrBadParams, &ServerErr{IErrno: e}) }
	switch {
	case p.Parallel < 0 || p.Parallel > MaxStreams:
		return bad(ErrnoNumStreams)
	case p.Time < 0 || p.Time > MaxTime:
		return bad(ErrnoDuration)
	case p.Omit < 0 || p.Omit > MaxOmit:
		return bad(ErrnoOmit)
	case p.Reverse && p.Bidirectional:
		return bad(ErrnoReverseBidir)
	case p.Num < 0 || p.BlockCount < 0 || p.Bandwidth < 0 || p.Window < 0 || p.Burst < 0:
		return bad(ErrnoInitTest)
	case p.Protocol == ProtoUDP && p.Len != 0 && (p.Len < MinUDPBlockSize || p.Len > MaxUDPBlockSize):
		return bad(ErrnoUDPBlockSize)
	case p.Protocol != ProtoUDP && (p.Len < 0 || p.Len > MaxBlockSize):
		return bad(ErrnoBlockSize)
	case p.Protocol == ProtoSCTP:
		return bad(ErrnoProtocol)
	}
	return nil
}

// StreamsPerDirection returns the number of streams per direction (at least 1).
func (p *Params) StreamsPerDirection() int {
	return int(max(p.Parallel, 1))
}

// TotalStreams returns how many data streams the client opens: Parallel, or
// twice that with Bidirectional.
func (p *Params) TotalStreams() int {
	if p.Bidirectional {
		return 2 * p.StreamsPerDirection()
	}
	return p.StreamsPerDirection()
}
