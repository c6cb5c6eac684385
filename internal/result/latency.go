package result

import "time"

// Kinds of the latency documents (docs/latency.md).
const (
	// KindLatency is the "kind" of a request/response latency test
	// (Latency), what `wirebench latency` writes.
	KindLatency = "request-response"
	// KindUnderLoad is the "kind" of a test run with a latency probe
	// beside it (UnderLoad), what `wirebench client --latency` writes.
	KindUnderLoad = "under-load"
)

// Probe protocols, the "proto" of LatencyTest and LatencyProbe.
const (
	ProbeUDP     = "udp"     // echo requests over UDP to a wirebench server
	ProbeTCP     = "tcp"     // echo requests on one TCP connection
	ProbeConnect = "connect" // the time of a TCP three-way handshake
	ProbeICMP    = "icmp"    // ICMP echo (ping), beside a load only
)

// Latency is one request/response latency test (JSON schema wirebench/1,
// kind KindLatency).
type Latency struct {
	Schema  string `json:"schema"`
	Kind    string `json:"kind"`
	Version string `json:"version,omitempty"`
	// RunID is the id the results store saved this run as, in the
	// printed document only (left out when the run was not saved).
	RunID     int64       `json:"run_id,omitempty"`
	StartedAt time.Time   `json:"started_at"`
	Test      LatencyTest `json:"test"`
	RTTStats
	Warnings []string `json:"warnings"`
	// Error says why the test ended early; the figures are what was
	// measured until then.
	Error string `json:"error,omitempty"`
}

// LatencyTest is a request/response latency test as it was run.
type LatencyTest struct {
	Proto    string  `json:"proto"`
	Host     string  `json:"host"`
	Port     int     `json:"port"`
	Peer     string  `json:"peer,omitempty"`
	Size     int     `json:"size,omitempty"`
	Count    int     `json:"count,omitempty"`
	Duration float64 `json:"duration_s,omitempty"`
	Interval float64 `json:"interval_s"`
	Timeout  float64 `json:"timeout_s"`
}

// RTTStats are the counts and RTT distribution of a run of probes.
type RTTStats struct {
	Seconds  float64 `json:"seconds"`
	Sent     int64   `json:"sent"`
	Received int64   `json:"received"`
	Timeouts int64   `json:"timeouts"`
	// Late replies arrived after their request timed out.
	Late int64 `json:"late"`
	// Errors are requests that failed outright (e.g. connection refused).
	Errors  int64   `json:"errors"`
	LossPct float64 `json:"loss_pct"`
	// RequestsPerSecond is answered requests per second of the run.
	RequestsPerSecond float64    `json:"requests_per_second"`
	RTT               RTTSummary `json:"rtt"`
}

// RTTSummary is a distribution of round-trip times. Times are in
// milliseconds. Min, Max, Mean and StdDev are exact; the percentiles come
// from an HDR histogram and are within 0.1 % (clamped to [Min, Max]).
type RTTSummary struct {
	Count  int64   `json:"count"`
	Min    float64 `json:"min_ms"`
	Mean   float64 `json:"mean_ms"`
	StdDev float64 `json:"stddev_ms"` // population standard deviation
	Max    float64 `json:"max_ms"`
	P50    float64 `json:"p50_ms"`
	P90    float64 `json:"p90_ms"`
	P99    float64 `json:"p99_ms"`
	P999   float64 `json:"p99_9_ms"`
	// Bins are the histogram's non-empty counts merged into coarse
	// logarithmic bins (20 per decade, each about 12 % wide), for plotting.
	Bins []RTTBin `json:"bins"`
}

// RTTBin is one coarse histogram bin: Count samples in [From, To) ms.
type RTTBin struct {
	From  float64 `json:"from_ms"`
	To    float64 `json:"to_ms"`
	Count int64   `json:"count"`
}

// UnderLoad is the idle and loaded RTT of one test (JSON schema
// wirebench/1, kind KindUnderLoad).
type UnderLoad struct {
	Schema  string `json:"schema"`
	Kind    string `json:"kind"`
	Version string `json:"version,omitempty"`
	// RunID is the id the results store saved this run as, in the
	// printed document only (left out when the run was not saved).
	RunID     int64        `json:"run_id,omitempty"`
	StartedAt time.Time    `json:"started_at"`
	Probe     LatencyProbe `json:"probe"`
	// Idle is the probe before the load started, Loaded the probe while
	// the load ran.
	Idle   RTTStats `json:"idle"`
	Loaded RTTStats `json:"loaded"`
	// Throughput is the load's own result (a wirebench/1 document), when
	// the caller puts it here.
	Throughput *Result  `json:"throughput,omitempty"`
	Warnings   []string `json:"warnings"`
	Error      string   `json:"error,omitempty"`
}

// LatencyProbe describes the probe of an UnderLoad document as run.
type LatencyProbe struct {
	Proto    string  `json:"proto"`
	Host     string  `json:"host"`
	Port     int     `json:"port,omitempty"`
	Peer     string  `json:"peer,omitempty"`
	Socket   string  `json:"socket,omitempty"` // ICMP socket kind
	Size     int     `json:"size"`
	Interval float64 `json:"interval_s"`
	Timeout  float64 `json:"timeout_s"`
	Idle     float64 `json:"idle_s"`
}
