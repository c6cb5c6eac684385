package iperf3

import "encoding/json"

// Report is the document iperf3 prints with -J (and sends as
// server_output_json). Field sets were checked by decoding real iperf3 3.12
// output (TCP, UDP, --bidir, -R) with DisallowUnknownFields and comparing the
// re-encoded document key by key; fields iperf3 prints only in some modes are
// pointers or omitempty so a round trip keeps the same keys. Keys that only
// later versions print (timemillisecs, fq_rate, reorder, bidir/fqrate/
// interval/gso/gro in test_start) are included as optional.
//
// Not modelled: -F's "diskfile", --json-stream events.
type Report struct {
	Start     ReportStart      `json:"start"`
	Intervals []ReportInterval `json:"intervals"`
	End       ReportEnd        `json:"end"`
	// Error is iperf3's error text when the test failed.
	Error            string          `json:"error,omitempty"`
	Title            string          `json:"title,omitempty"`
	ExtraData        string          `json:"extra_data,omitempty"`
	ServerOutputJSON json.RawMessage `json:"server_output_json,omitempty"`
	ServerOutputText string          `json:"server_output_text,omitempty"`
}

// ReportStart is the "start" section.
type ReportStart struct {
	Connected          []ReportConnection `json:"connected"`
	Version            string             `json:"version"`
	SystemInfo         string             `json:"system_info"`
	Timestamp          ReportTimestamp    `json:"timestamp"`
	ConnectingTo       *ReportHostPort    `json:"connecting_to,omitempty"`       // client side
	AcceptedConnection *ReportHostPort    `json:"accepted_connection,omitempty"` // server side
	Cookie             string             `json:"cookie,omitempty"`
	TCPMSS             *int64             `json:"tcp_mss,omitempty"`         // with -M
	TCPMSSDefault      *int64             `json:"tcp_mss_default,omitempty"` // TCP without -M
	TargetBitrate      *int64             `json:"target_bitrate,omitempty"`
	FQRate             *int64             `json:"fq_rate,omitempty"`
	SockBufSize        *int64             `json:"sock_bufsize,omitempty"`
	SndBufActual       *int64             `json:"sndbuf_actual,omitempty"`
	RcvBufActual       *int64             `json:"rcvbuf_actual,omitempty"`
	TestStart          *ReportTestStart   `json:"test_start,omitempty"`
}

// ReportConnection is one element of start.connected.
type ReportConnection struct {
	Socket     int64  `json:"socket"`
	LocalHost  string `json:"local_host"`
	LocalPort  int64  `json:"local_port"`
	RemoteHost string `json:"remote_host"`
	RemotePort int64  `json:"remote_port"`
}

// ReportTimestamp is start.timestamp.
type ReportTimestamp struct {
	Time          string `json:"time"` // RFC 1123 style, GMT
	TimeSecs      int64  `json:"timesecs"`
	TimeMillisecs *int64 `json:"timemillisecs,omitempty"` // newer versions
}

// ReportHostPort is start.connecting_to or start.accepted_connection.
type ReportHostPort struct {
	Host string `json:"host"`
	Port int64  `json:"port"`
}

// ReportTestStart is start.test_start.
type ReportTestStart struct {
	Protocol      string   `json:"protocol"` // "TCP", "UDP", "SCTP"
	NumStreams    int64    `json:"num_streams"`
	BlkSize       int64    `json:"blksize"`
	Omit          int64    `json:"omit"`
	Duration      int64    `json:"duration"`
	Bytes         int64    `json:"bytes"`
	Blocks        int64    `json:"blocks"`
	Reverse       int64    `json:"reverse"`
	TOS           int64    `json:"tos"`
	TargetBitrate int64    `json:"target_bitrate"`
	Bidir         *int64   `json:"bidir,omitempty"`    // newer versions
	FQRate        *int64   `json:"fqrate,omitempty"`   // newer versions
	Interval      *float64 `json:"interval,omitempty"` // newer versions
	GSO           *int64   `json:"gso,omitempty"`      // 3.21+
	GRO           *int64   `json:"gro,omitempty"`      // 3.21+
}

// ReportInterval is one element of "intervals".
type ReportInterval struct {
	Streams []ReportSummary `json:"streams"`
	Sum     *ReportSummary  `json:"sum,omitempty"`
	// SumBidirReverse is the reverse direction's sum with --bidir.
	SumBidirReverse *ReportSummary `json:"sum_bidir_reverse,omitempty"`
}

// ReportEnd is the "end" section. It is empty when the test failed.
type ReportEnd struct {
	Streams                 []ReportEndStream `json:"streams,omitempty"`
	Sum                     *ReportSummary    `json:"sum,omitempty"` // UDP
	SumSent                 *ReportSummary    `json:"sum_sent,omitempty"`
	SumReceived             *ReportSummary    `json:"sum_received,omitempty"`
	SumBidirReverse         *ReportSummary    `json:"sum_bidir_reverse,omitempty"` // UDP --bidir
	SumSentBidirReverse     *ReportSummary    `json:"sum_sent_bidir_reverse,omitempty"`
	SumReceivedBidirReverse *ReportSummary    `json:"sum_received_bidir_reverse,omitempty"`
	CPUUtilizationPercent   *ReportCPU        `json:"cpu_utilization_percent,omitempty"`
	SenderTCPCongestion     string            `json:"sender_tcp_congestion,omitempty"`
	ReceiverTCPCongestion   string            `json:"receiver_tcp_congestion,omitempty"`
}

// ReportEndStream is one element of end.streams: sender and receiver for
// TCP, udp for UDP.
type ReportEndStream struct {
	Sender   *ReportSummary `json:"sender,omitempty"`
	Receiver *ReportSummary `json:"receiver,omitempty"`
	UDP      *ReportSummary `json:"udp,omitempty"`
}

// ReportCPU is end.cpu_utilization_percent.
type ReportCPU struct {
	HostTotal    float64 `json:"host_total"`
	HostUser     float64 `json:"host_user"`
	HostSystem   float64 `json:"host_system"`
	RemoteTotal  float64 `json:"remote_total"`
	RemoteUser   float64 `json:"remote_user"`
	RemoteSystem float64 `json:"remote_system"`
}

// ReportSummary is the common shape of interval streams, interval sums, end
// streams and end sums. Which optional keys appear depends on the place,
// the protocol and the role; key order follows iperf3's.
type ReportSummary struct {
	Socket        *int64   `json:"socket,omitempty"` // per stream only
	Start         float64  `json:"start"`
	End           float64  `json:"end"`
	Seconds       float64  `json:"seconds"`
	Bytes         int64    `json:"bytes"`
	BitsPerSecond float64  `json:"bits_per_second"`
	JitterMs      *float64 `json:"jitter_ms,omitempty"`    // UDP
	LostPackets   *int64   `json:"lost_packets,omitempty"` // UDP
	Retransmits   *int64   `json:"retransmits,omitempty"`  // TCP sender
	SndCwnd       *int64   `json:"snd_cwnd,omitempty"`     // TCP sender interval (Linux)
	SndWnd        *int64   `json:"snd_wnd,omitempty"`
	RTT           *int64   `json:"rtt,omitempty"` // µs
	RTTVar        *int64   `json:"rttvar,omitempty"`
	PMTU          *int64   `json:"pmtu,omitempty"`
	Reorder       *int64   `json:"reorder,omitempty"` // newer versions
	MaxSndCwnd    *int64   `json:"max_snd_cwnd,omitempty"`
	MaxSndWnd     *int64   `json:"max_snd_wnd,omitempty"`
	MaxRTT        *int64   `json:"max_rtt,omitempty"`
	MinRTT        *int64   `json:"min_rtt,omitempty"`
	MeanRTT       *int64   `json:"mean_rtt,omitempty"`
	Packets       *int64   `json:"packets,omitempty"`      // UDP
	LostPercent   *float64 `json:"lost_percent,omitempty"` // UDP
	OutOfOrder    *int64   `json:"out_of_order,omitempty"` // UDP end stream
	Omitted       *bool    `json:"omitted,omitempty"`      // intervals
	Sender        bool     `json:"sender"`
}

// Clone returns a copy of s that shares no pointer with it, so that a sum
// built from one stream's figures can grow without changing that stream's.
func (s ReportSummary) Clone() ReportSummary {
	c := s
	for _, p := range []**int64{&c.Socket, &c.LostPackets, &c.Retransmits, &c.SndCwnd, &c.SndWnd, &c.RTT, &c.RTTVar,
		&c.PMTU, &c.Reorder, &c.MaxSndCwnd, &c.MaxSndWnd, &c.MaxRTT, &c.MinRTT, &c.MeanRTT, &c.Packets, &c.OutOfOrder} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	for _, p := range []**float64{&c.JitterMs, &c.LostPercent} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	if c.Omitted != nil {
		v := *c.Omitted
		c.Omitted = &v
	}
	return c
}
