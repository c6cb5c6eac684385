package pscheduler

import "encoding/json"

// Test types this tool runs.
const (
	TestThroughput = "throughput"
	TestRTT        = "rtt"
)

// Test is pScheduler's test object: the test type and its spec, as every
// method but enumerate receives it (whole, or under "test").
type Test struct {
	Type string          `json:"type"`
	Spec json.RawMessage `json:"spec"`
}

// ParticipantInput is the input of participant-data.
type ParticipantInput struct {
	Participant int  `json:"participant"`
	Test        Test `json:"test"`
}

// Schedule is when pScheduler scheduled a run.
type Schedule struct {
	Start    string `json:"start"`
	Duration string `json:"duration"`
}

// RunInput is the input of run.
type RunInput struct {
	Schema          int               `json:"schema"`
	TaskUUID        string            `json:"task-uuid"`
	Schedule        Schedule          `json:"schedule"`
	Test            Test              `json:"test"`
	Participant     int               `json:"participant"`
	ParticipantData []json.RawMessage `json:"participant-data"`
}

// MergeInput is the input of merged-results: the test and each
// participant's run output, in participant order (null where a
// participant produced none).
type MergeInput struct {
	Test    Test              `json:"test"`
	Results []json.RawMessage `json:"results"`
}

// ThroughputSpec is a throughput test spec (schemas 1 to 7).
type ThroughputSpec struct {
	Schema            int     `json:"schema,omitempty"`
	Source            string  `json:"source,omitempty"`
	SourceNode        string  `json:"source-node,omitempty"`
	Dest              string  `json:"dest"`
	DestNode          string  `json:"dest-node,omitempty"`
	Duration          string  `json:"duration,omitempty"`
	Interval          string  `json:"interval,omitempty"`
	LinkRTT           string  `json:"link-rtt,omitempty"`
	Parallel          int     `json:"parallel,omitempty"`
	UDP               bool    `json:"udp,omitempty"`
	Bandwidth         float64 `json:"bandwidth,omitempty"`
	BandwidthStrict   bool    `json:"bandwidth-strict,omitempty"`
	BurstSize         int     `json:"burst-size,omitempty"`
	FQRate            int64   `json:"fq-rate,omitempty"`
	WindowSize        int     `json:"window-size,omitempty"`
	MSS               int     `json:"mss,omitempty"`
	BufferLength      int     `json:"buffer-length,omitempty"`
	IPTOS             *int    `json:"ip-tos,omitempty"`
	IPVersion         int     `json:"ip-version,omitempty"`
	LocalAddress      string  `json:"local-address,omitempty"`
	Omit              string  `json:"omit,omitempty"`
	NoDelay           bool    `json:"no-delay,omitempty"`
	Congestion        string  `json:"congestion,omitempty"`
	ZeroCopy          bool    `json:"zero-copy,omitempty"`
	FlowLabel         int     `json:"flow-label,omitempty"`
	ClientCPUAffinity *int    `json:"client-cpu-affinity,omitempty"`
	ServerCPUAffinity *int    `json:"server-cpu-affinity,omitempty"`
	SingleEnded       bool    `json:"single-ended,omitempty"`
	SingleEndedPort   int     `json:"single-ended-port,omitempty"`
	Reverse           bool    `json:"reverse,omitempty"`
	ReverseConnection bool    `json:"reverse-connections,omitempty"`
	Loopback          bool    `json:"loopback,omitempty"`
}

// RTTSpec is an rtt test spec (schemas 1 to 4).
type RTTSpec struct {
	Schema           int    `json:"schema,omitempty"`
	Count            int    `json:"count,omitempty"`
	Dest             string `json:"dest"`
	FlowLabel        *int   `json:"flow-label,omitempty"`
	Fragment         *bool  `json:"fragment,omitempty"`
	Hostnames        *bool  `json:"hostnames,omitempty"`
	Interval         string `json:"interval,omitempty"`
	IPVersion        int    `json:"ip-version,omitempty"`
	Source           string `json:"source,omitempty"`
	SourceNode       string `json:"source-node,omitempty"`
	SuppressLoopback *bool  `json:"suppress-loopback,omitempty"`
	IPTOS            *int   `json:"ip-tos,omitempty"`
	Length           int    `json:"length,omitempty"`
	TTL              int    `json:"ttl,omitempty"`
	Deadline         string `json:"deadline,omitempty"`
	Timeout          string `json:"timeout,omitempty"`
	Port             *int   `json:"port,omitempty"`
	Protocol         string `json:"protocol,omitempty"`
}

// ThroughputData is one set of figures in a throughput result
// ("throughput-data" in the test's result schema). Absent fields were not
// measured.
type ThroughputData struct {
	StreamID               *int     `json:"stream-id,omitempty"`
	Start                  float64  `json:"start"`
	End                    float64  `json:"end"`
	ThroughputBits         float64  `json:"throughput-bits"`
	ThroughputBytes        *float64 `json:"throughput-bytes,omitempty"`
	ReceiverThroughputBits *float64 `json:"receiver-throughput-bits,omitempty"`
	Sent                   *int64   `json:"sent,omitempty"`
	Lost                   *int64   `json:"lost,omitempty"`
	Jitter                 *float64 `json:"jitter,omitempty"`
	RTT                    *float64 `json:"rtt,omitempty"`
	TCPWindowSize          *int64   `json:"tcp-window-size,omitempty"`
	Retransmits            *int64   `json:"retransmits,omitempty"`
	Omitted                *bool    `json:"omitted,omitempty"`
}

// ThroughputInterval is one reporting interval of a throughput result.
type ThroughputInterval struct {
	Streams []ThroughputData `json:"streams"`
	Summary ThroughputData   `json:"summary"`
}

// ThroughputSummary is the whole-test part of a throughput result.
type ThroughputSummary struct {
	Streams []ThroughputData `json:"streams,omitempty"`
	Summary *ThroughputData  `json:"summary,omitempty"`
}

// ThroughputResult is a throughput test's result.
type ThroughputResult struct {
	Schema    int                  `json:"schema,omitempty"`
	Succeeded bool                 `json:"succeeded"`
	Error     string               `json:"error,omitempty"`
	Diags     string               `json:"diags"`
	MSS       int                  `json:"mss,omitempty"`
	Intervals []ThroughputInterval `json:"intervals"`
	Summary   ThroughputSummary    `json:"summary"`
}

// Roundtrip is one echo of an rtt result.
type Roundtrip struct {
	IP     string `json:"ip,omitempty"`
	Length int    `json:"length,omitempty"`
	RTT    string `json:"rtt,omitempty"`
	TTL    int    `json:"ttl,omitempty"`
	Seq    int    `json:"seq,omitempty"`
	Error  string `json:"error,omitempty"`
}

// RTTResult is an rtt test's result.
type RTTResult struct {
	Schema     int         `json:"schema,omitempty"`
	Succeeded  bool        `json:"succeeded"`
	Error      string      `json:"error,omitempty"`
	Diags      string      `json:"diags,omitempty"`
	Roundtrips []Roundtrip `json:"roundtrips"`
	Sent       int         `json:"sent,omitempty"`
	Received   *int        `json:"received,omitempty"`
	Lost       *int        `json:"lost,omitempty"`
	Reorders   *int        `json:"reorders,omitempty"`
	Duplicates *int        `json:"duplicates,omitempty"`
	Loss       float64     `json:"loss"`
	Min        string      `json:"min,omitempty"`
	Max        string      `json:"max,omitempty"`
	Mean       string      `json:"mean,omitempty"`
	Stddev     string      `json:"stddev,omitempty"`
}

// MarshalJSON writes the result, with "intervals" and "summary" always
// present (empty when nothing was measured), as the schema requires them.
func (r ThroughputResult) MarshalJSON() ([]byte, error) {
	type plain ThroughputResult
	if r.Intervals == nil {
		r.Intervals = []ThroughputInterval{}
	}
	return json.Marshal(plain(r))
}

// MarshalJSON writes the result; a failed run has no roundtrips and no
// loss, as pScheduler's ping tool's failures have none: the schema
// requires loss, and any value would claim a measurement.
func (r RTTResult) MarshalJSON() ([]byte, error) {
	type plain RTTResult
	if r.Succeeded {
		if r.Roundtrips == nil {
			r.Roundtrips = []Roundtrip{}
		}
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		Schema    int    `json:"schema,omitempty"`
		Succeeded bool   `json:"succeeded"`
		Error     string `json:"error,omitempty"`
		Diags     string `json:"diags,omitempty"`
	}{r.Schema, r.Succeeded, r.Error, r.Diags})
}
