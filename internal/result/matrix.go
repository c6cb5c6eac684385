package result

import "time"

// KindMatrix is the "kind" of a matrix document (Matrix, docs/matrix.md).
const KindMatrix = "matrix"

// Directions of a matrix cell, seen from the side running the matrix.
const (
	MatrixUpload   = "upload"   // we send, the peer receives
	MatrixDownload = "download" // the peer sends, we receive
)

// Matrix is one matrix run: a JSON document of kind "matrix".
type Matrix struct {
	Schema  string `json:"schema"`
	Kind    string `json:"kind"`
	Version string `json:"version,omitempty"`
	// RunID is the id the results store saved this run as, in the
	// printed document only (left out when the run was not saved).
	RunID     int64     `json:"run_id,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Host      string    `json:"host"`
	Port      int       `json:"port"`
	Dialect   string    `json:"dialect"`
	// DialectChosenBy says how the dialect was chosen ("flag", "port",
	// "probe", "fallback", "device"); DialectReason what the probe saw.
	DialectChosenBy string `json:"dialect_chosen_by,omitempty"`
	DialectReason   string `json:"dialect_reason,omitempty"`
	// Duration is each cell's requested duration in seconds.
	Duration float64 `json:"duration_s"`
	// RateBPS is the requested UDP rate in payload bit/s, or RatePPS in
	// datagrams/s; both 0 when the dialect's default applied.
	RateBPS float64      `json:"rate_bps,omitempty"`
	RatePPS float64      `json:"rate_pps,omitempty"`
	Medium  string       `json:"medium,omitempty"`
	Cells   []MatrixCell `json:"cells"`
	// Warnings collect every cell's warnings, prefixed with the cell.
	Warnings []string `json:"warnings"`
	// Error is set when the matrix was stopped before all cells ran.
	Error string `json:"error,omitempty"`
}

// MatrixCell is one protocol × direction of the table.
type MatrixCell struct {
	Protocol  string `json:"protocol"`  // TCP or UDP
	Direction string `json:"direction"` // MatrixUpload or MatrixDownload
	// Simultaneous marks the cells of a --bidir row: both directions ran
	// at once in one test.
	Simultaneous bool `json:"simultaneous,omitempty"`
	// Method says how the direction was asked of the peer: "client sends",
	// "-R" (reverse), "-r" (connect-back after the test), "--full-duplex",
	// "-d", "--bidir".
	Method        string   `json:"method,omitempty"`
	BitsPerSecond *float64 `json:"bits_per_second"`
	// LossPercent and JitterMS are UDP receiver figures; null for TCP.
	LossPercent *float64 `json:"loss_percent"`
	JitterMS    *float64 `json:"jitter_ms"`
	// PercentOfLine is the goodput as a share of the medium's theoretical
	// goodput; null without --medium.
	PercentOfLine *float64 `json:"percent_of_line"`
	// Basis says whose count the figures are: "receiver" (what arrived)
	// or "sender" (what was sent: the receiver's count is unknown).
	Basis  string `json:"basis,omitempty"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Result is the cell's full test result (shared by both cells of a
	// --bidir row); nil when the cell did not run.
	Result *Result `json:"result,omitempty"`
	// Latency is the idle and loaded RTT probe of the cell (--latency).
	Latency *UnderLoad `json:"latency,omitempty"`
	// Device is what the device's own shell reported for the cell (--dut),
	// as parsed: fields it did not print are absent.
	Device *Device `json:"device,omitempty"`
}

// Name is the cell's name in progress lines and warnings, e.g. "tcp
// download" or "udp upload (bidir)".
func (c MatrixCell) Name() string {
	n := c.Protocol + " " + c.Direction
	if c.Simultaneous {
		n += " (bidir)"
	}
	return n
}

// plan is one test of the matrix and the cells it fills.
