package result

import "time"

// KindDiagnosis is the "kind" of a diagnosis's document (Diagnosis,
// docs/diagnose.md).
const KindDiagnosis = "diagnosis"

// Finding kinds of a diagnosis (DiagnosisFinding.Kind), each with the
// figures it carries (docs/diagnose.md).
const (
	FindingFrameRate   = "frame_rate_limit" // frames_per_second
	FindingByteRate    = "byte_rate_limit"  // line_bits_per_second, goodput_bits_per_second
	FindingBoth        = "frame_and_byte_rate_limit"
	FindingPerFrame    = "per_frame_cost" // a_us, b_ns_per_byte
	FindingTick        = "tick"           // period_ms, frames_per_tick
	FindingSizeCliff   = "size_cliff"     // last_good_size, first_bad_size, buffer_bytes
	FindingSizeLimit   = "size_limit"     // max_size
	FindingLossFloor   = "loss_floor"     // loss_percent
	FindingQueue       = "queue"          // queue_ms
	FindingDirection   = "direction"      // upload_bits_per_second, download_bits_per_second
	FindingTCPBelowUDP = "tcp_below_udp"  // tcp_bits_per_second, udp_bits_per_second, explained_by
	FindingMedium      = "medium_limit"   // percent_of_line
	FindingHost        = "host_limit"     // side
	ConfidenceHigh     = "high"           // the rule's conditions hold with margin
	ConfidenceMedium   = "medium"         // they hold, with little margin or few runs
	ConfidenceLow      = "low"            // a lower bound or a guess the runs only hint at
	DiagnoseLoad       = "load"           // a probe above what the far end delivers
	DiagnoseLowRate    = "low_rate"       // a long probe well under it: the loss floor
	DiagnoseSize       = "size"           // a few datagrams of one size: do they arrive?
	DiagnoseUpload     = "upload"         // UDP from us to the device (a server's report)
	DiagnoseDownload   = "download"       // UDP from the device to us
	DiagnoseTCP        = "tcp"            // a TCP test in the upload direction
	DiagnoseBisect     = "bisect"         // a load probe at a size between a cliff's two sides
	DiagnoseQueue      = "queue"          // a probe at twice the limit, long enough to fill the queue
	DiagnoseSideSender = "sender"         // host_limit's side: our sender
	DiagnoseSideRecv   = "receiver"       // host_limit's side: our receiver
)

// DiagnosisFinding is one thing a diagnosis found, with its figures, how
// sure it is, and the runs that are its evidence.
type DiagnosisFinding struct {
	Kind       string `json:"kind"`
	Confidence string `json:"confidence"`
	// Figures are the finding's numbers, by the names docs/diagnose.md
	// gives per kind; Words are its figures that are words
	// (tcp_below_udp's explained_by, host_limit's side).
	Figures map[string]float64 `json:"figures"`
	Words   map[string]string  `json:"words,omitempty"`
	// EvidenceRuns are the ids of the runs (DiagnosisRun.ID) it rests on.
	EvidenceRuns []int  `json:"evidence_runs"`
	Text         string `json:"text"`
}

// DiagnosisRun is one short test of a diagnosis, as measured.
type DiagnosisRun struct {
	// ID numbers the runs of one diagnosis from 1, or is the results
	// store's id of the run when every run was saved (SavedID, then equal).
	ID      int   `json:"id"`
	SavedID int64 `json:"saved_id,omitempty"`
	// StartedAt is when the run started (for saving it; not in the JSON).
	StartedAt time.Time `json:"-"`
	Purpose   string    `json:"purpose"` // DiagnoseLoad, DiagnoseLowRate, ...
	Size      int       `json:"size"`
	// AskedPPS is the rate asked of our sender, SentPPS what it really
	// offered (first to last datagram).
	AskedPPS float64 `json:"asked_pps"`
	SentPPS  float64 `json:"sent_pps"`
	Sent     int64   `json:"sent"`
	Received int64   `json:"received"`
	// DeliveredPPS is the rate the far end delivered at: timed from its
	// deliveries while it held a queue where it did, else its count over
	// its own receive window; 0 when nothing arrived.
	DeliveredPPS float64 `json:"delivered_pps"`
	LossPercent  float64 `json:"loss_percent"`
	// Queued says the far end held a queue during the run (what came back
	// had waited), so DeliveredPPS is its own pace, not ours.
	Queued bool `json:"queued,omitempty"`
	// RTTMinMs and RTTLateMs are the lowest round-trip time and the median
	// of the last third of the run's (a reflector's); 0 when unknown.
	RTTMinMs  float64 `json:"rtt_min_ms,omitempty"`
	RTTLateMs float64 `json:"rtt_late_ms,omitempty"`
	// RTTSettled says the round trip had stopped rising in the last third
	// of the run (its two halves' medians within 5 % or 1 ms): a queue
	// that filled, not one still filling when the run ended.
	RTTSettled bool `json:"rtt_settled,omitempty"`
	// TickHz and FramesPerTick are the timer tick the arrivals followed
	// (internal/tickdiag), 0 when none was seen or arrivals were not timed.
	TickHz        float64 `json:"tick_hz,omitempty"`
	FramesPerTick float64 `json:"frames_per_tick,omitempty"`
	// ArrivalsMs are, for a run whose arrivals followed a tick, an excerpt
	// of them from the run's middle (20 ticks, at most 400 arrivals), in
	// ms since the first of the excerpt: the report charts them.
	ArrivalsMs []float64 `json:"arrivals_ms,omitempty"`
	// HostDrops counts datagrams our own receive buffer dropped.
	HostDrops int64 `json:"host_drops,omitempty"`
	// BitsPerSecond is a TCP or directional test's goodput; RTTMs,
	// WindowBytes and Retransmits a TCP test's smoothed round trip,
	// congestion window and segments sent again, when the kernel told.
	BitsPerSecond float64  `json:"bits_per_second,omitempty"`
	RTTMs         float64  `json:"rtt_ms,omitempty"`
	WindowBytes   float64  `json:"window_bytes,omitempty"`
	Retransmits   int64    `json:"retransmits,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
}

// DiagnosisTest is what a diagnosis was asked.
type DiagnosisTest struct {
	Mode     string  `json:"mode"`
	Host     string  `json:"host"`
	Port     int     `json:"port"`
	Medium   string  `json:"medium"`
	BudgetS  float64 `json:"budget_s"`
	MaxPPS   float64 `json:"max_pps"`
	Sizes    []int   `json:"sizes"`
	LabelKey string  `json:"label,omitempty"` // diagnose=ID on every saved run
	// DUT is the --dut line when the device's own shell ran the device's
	// side of every run (its server; its client for a download).
	DUT string `json:"dut,omitempty"`
}

// Diagnosis is a diagnosis's document (schema wirebench/1, kind
// "diagnosis"): what limits the link, in one paragraph, with its evidence.
type Diagnosis struct {
	Schema    string        `json:"schema"`
	Kind      string        `json:"kind"`
	Version   string        `json:"version,omitempty"`
	RunID     int64         `json:"run_id,omitempty"`
	StartedAt time.Time     `json:"started_at"`
	Test      DiagnosisTest `json:"test"`
	// Verdict is the paragraph: the limit, its figures and its evidence.
	Verdict  string             `json:"verdict"`
	Findings []DiagnosisFinding `json:"findings"`
	// CannotTell are the questions the runs could not answer, and why.
	CannotTell []string       `json:"cannot_tell"`
	Runs       []DiagnosisRun `json:"runs"`
	Seconds    float64        `json:"duration_s"`
	// Interrupted says the diagnosis was stopped (Ctrl-C) or ran out of
	// budget before its plan ended: the findings are those reached.
	Interrupted bool `json:"interrupted,omitempty"`
	// Device is the session with the device's shell (--dut): its
	// transcript, and the device's error that ended the plan, if any.
	Device   *SweepDeviceSession `json:"device,omitempty"`
	Warnings []string            `json:"warnings"`
	Error    string              `json:"error,omitempty"`
}
