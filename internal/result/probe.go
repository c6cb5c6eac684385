package result

import "time"

// KindProbe is the "kind" of a probe's document (Probe, docs/probe.md).
const KindProbe = "probe"

// ProbeSupport is a tri-state answer about an optional feature.
type ProbeSupport string

// ProbeSupport values.
const (
	ProbeYes      ProbeSupport = "yes"
	ProbeNo       ProbeSupport = "no"
	ProbeUntested ProbeSupport = "untested"
)

// Dialect names used in Probe.Dialects.
const (
	ProbeDialectIperf2TCP    = "iperf2-tcp"        // iperf 2.1+ TCP (CLIENTHDRACK seen)
	ProbeDialectTCPSink      = "tcp-sink"          // TCP accepting data silently (2.0.x, lwiperf, zperf, ESP-IDF)
	ProbeDialectIperf2UDP    = "iperf2-udp"        // iperf2 UDP with a modern (offset 16) report
	ProbeDialectIperf2UDPOld = "iperf2-udp-legacy" // iperf2 UDP with a legacy (offset 12) report
	ProbeDialectIperf3       = "iperf3"
	ProbeDialectWirebench    = "wirebench"
)

// Probe is one probe of a peer (JSON schema wirebench/1, kind KindProbe).
type Probe struct {
	Schema    string    `json:"schema"`
	Kind      string    `json:"kind"`
	Version   string    `json:"version"` // wirebench's own version
	Host      string    `json:"host"`
	Port      int       `json:"port"`
	StartedAt time.Time `json:"started_at"`
	ElapsedMs float64   `json:"elapsed_ms"`
	// Answered is false when nothing on the port answered any step.
	Answered bool `json:"answered"`
	// Dialects lists what answered (ProbeDialect* constants), strongest first.
	Dialects []string `json:"dialects"`
	Summary  string   `json:"summary"`

	TCP       ProbeTCPPort   `json:"tcp"`
	Iperf2    ProbeIperf2    `json:"iperf2"`
	Iperf3    ProbeIperf3    `json:"iperf3"`
	Wirebench ProbeWirebench `json:"wirebench"`
	Steps     []ProbeStep    `json:"steps"`
}

// ProbeTCPPort is what the TCP port did.
type ProbeTCPPort struct {
	// Open is true when a TCP connection was accepted.
	Open bool `json:"open"`
	// Opening is the verdict of the first exchange (probe.OpeningKind values).
	Opening string `json:"opening"`
	// LaterRefused is set when a later connection was refused after an
	// earlier one was accepted (single-connection servers such as lwiperf).
	LaterRefused bool `json:"later_refused,omitempty"`
}

// ProbeIperf2 is what the iperf2 steps found.
type ProbeIperf2 struct {
	TCP bool `json:"tcp"` // a CLIENTHDRACK arrived (iperf 2.1+ TCP)
	// TCPNoAck is set when TCP accepted data but never acked (2.0.x,
	// lwiperf, zperf, ESP-IDF, or any plain sink).
	TCPNoAck bool `json:"tcp_no_ack"`
	// Version is from the CLIENTHDRACK version words, e.g. "2.1.8".
	Version     string       `json:"version,omitempty"`
	Reverse     ProbeSupport `json:"reverse"`      // -R on the same connection
	ConnectBack ProbeSupport `json:"connect_back"` // -d: the server connects to our port

	UDP bool `json:"udp"` // a server report arrived
	// UDPLayout is "modern" (report at 16) or "legacy" (report at 12).
	UDPLayout    string          `json:"udp_layout,omitempty"`
	ServerReport ProbeSupport    `json:"server_report"`
	Report       *ProbeUDPReport `json:"report,omitempty"`
	// EchoReplies counts replies that were echoes of our own FIN (the 2.1.8
	// re-send quirk); they are not taken as reports.
	EchoReplies int `json:"echo_replies,omitempty"`
}

// ProbeUDPReport is the server report of the probe's tiny UDP test, next to what
// the probe sent, so the two can be compared.
type ProbeUDPReport struct {
	Flags      string  `json:"flags"` // hex, e.g. "88000000"
	Bytes      uint64  `json:"bytes"`
	Datagrams  uint64  `json:"datagrams"`
	Lost       uint64  `json:"lost"`
	OutOfOrder uint64  `json:"out_of_order"`
	JitterMs   float64 `json:"jitter_ms"`
	DurationMs float64 `json:"duration_ms"`
	ReplyLen   int     `json:"reply_len"`
	SentData   int     `json:"sent_datagrams"` // data datagrams sent, FINs not counted
	SentBytes  int     `json:"sent_bytes"`     // bytes of the data datagrams and the first FIN
}

// ProbeIperf3 is what the iperf3 steps found.
type ProbeIperf3 struct {
	Answered bool `json:"answered"` // PARAM_EXCHANGE or ACCESS_DENIED came back
	Busy     bool `json:"busy"`     // ACCESS_DENIED (0xFF): a test is running
	// TestCompleted is set when the tiny test ran to IPERF_DONE.
	TestCompleted bool `json:"test_completed"`
	// ServerBytes is what the server reported receiving in the tiny test.
	ServerBytes int64 `json:"server_bytes,omitempty"`
	SentBytes   int64 `json:"sent_bytes,omitempty"`
	// Version stays empty: an iperf3 server does not send its version.
	Version string `json:"version,omitempty"`
	// Reverse is yes for every iperf3 server (-R is in the base protocol).
	Reverse ProbeSupport `json:"reverse"`
	Error   string       `json:"error,omitempty"`
}

// ProbeWirebench is what identified a wirebench peer.
type ProbeWirebench struct {
	EchoTCP bool `json:"echo_tcp"`
	EchoUDP bool `json:"echo_udp"`
	// EchoVersion is the echo format version of the reply.
	EchoVersion int `json:"echo_version,omitempty"`
	// Iperf3Ext is set when the iperf3 test's results carried wb_version.
	Iperf3Ext bool   `json:"iperf3_extension"`
	Agent     string `json:"agent,omitempty"`
}

// ProbeStep records one exchange: what was tried, the verdict and its duration.
type ProbeStep struct {
	Name      string  `json:"name"`
	Verdict   string  `json:"verdict"`
	Detail    string  `json:"detail,omitempty"`
	ElapsedMs float64 `json:"elapsed_ms"`
}

// ProbeVersionText is an iperf 2.1+ version as the probe words it: the
// version the CLIENTHDRACK carried, or that it carried none.
func ProbeVersionText(v string) string {
	if v == "" {
		return "2.1+ (version unknown)"
	}
	return v
}
