package htmlreport

// rfc2544View is the keys of an RFC 2544 run's document (kind "rfc2544",
// docs/rfc2544.md) that its charts and tables read. It is decoded here,
// not imported: the report stands below the package that measures.
type rfc2544View struct {
	Test struct {
		Mode       string    `json:"mode"`
		Host       string    `json:"host"`
		Port       int       `json:"port"`
		Medium     string    `json:"medium"`
		Tests      []string  `json:"tests"`
		PDRPercent float64   `json:"pdr_percent"`
		Loads      []float64 `json:"latency_loads_percent"`
		Strict     bool      `json:"strict"`
	} `json:"test"`
	Seconds     float64       `json:"seconds"`
	Sizes       []rfcSizeView `json:"sizes"`
	Interrupted bool          `json:"interrupted"`
	Error       string        `json:"error"`
	Warnings    []string      `json:"warnings"`
}

// The tests' names, as the document writes them in "tests" and "done".
const (
	rfcThroughput = "throughput"
	rfcLatency    = "latency"
	rfcLoss       = "loss"
	rfcBackToBack = "backtoback"
)

// rfcSizeView is one size's results.
type rfcSizeView struct {
	Size    int     `json:"size"`
	LinePPS float64 `json:"line_pps"`
	NDRPPS  float64 `json:"ndr_pps"`
	PDRPPS  float64 `json:"pdr_pps"`
	NDRBPS  float64 `json:"ndr_bps"`
	PDRBPS  float64 `json:"pdr_bps"`
	NDR     *struct {
		HeldS         float64 `json:"held_s"`
		LimitedByHost bool    `json:"limited_by_host"`
	} `json:"ndr"`
	PDR *struct {
		LossPercent float64 `json:"loss_percent"`
	} `json:"pdr"`
	Latency     []rfcLatencyView `json:"latency"`
	LatencyNote string           `json:"latency_note"`
	LossCurve   []struct {
		OfferedPercent float64 `json:"offered_percent"`
		OfferedPPS     float64 `json:"offered_pps"`
		LossPercent    float64 `json:"loss_percent"`
		HostLimited    bool    `json:"host_limited"`
	} `json:"loss_curve"`
	BackToBackFrames float64 `json:"back_to_back_frames"`
	BackToBackUS     float64 `json:"back_to_back_us"`
	BackToBack       *struct {
		Searches       []struct{} `json:"searches"`
		MinFrames      int64      `json:"min_frames"`
		MaxFrames      int64      `json:"max_frames"`
		AtLineRate     bool       `json:"at_line_rate"`
		SlowestPercent float64    `json:"slowest_percent_of_line"`
		Capped         bool       `json:"capped"`
	} `json:"back_to_back"`
	Done     []string `json:"done"`
	Warnings []string `json:"warnings"`
}

// rfcLatencyView is the latency at one load.
type rfcLatencyView struct {
	LoadPercent float64 `json:"load_percent"`
	OfferedPPS  float64 `json:"offered_pps"`
	Kind        string  `json:"kind"`
	Repeats     int     `json:"repeats"`
	Sent        int64   `json:"sent"`
	Lost        int64   `json:"lost"`
	MinMS       float64 `json:"min_ms"`
	P50MS       float64 `json:"p50_ms"`
	P90MS       float64 `json:"p90_ms"`
	P99MS       float64 `json:"p99_ms"`
	MaxMS       float64 `json:"max_ms"`
	HostLimited bool    `json:"host_limited"`
}

func (z rfcSizeView) done(test string) bool {
	for _, d := range z.Done {
		if d == test {
			return true
		}
	}
	return false
}

// lineBPS is the medium's maximum rate for the size in UDP payload bit/s
// (the unit of ndr_bps and pdr_bps).
func (z rfcSizeView) lineBPS() float64 { return z.LinePPS * 8 * float64(z.Size) }
