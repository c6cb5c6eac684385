package result

import "time"

// KindSweep is the "kind" of a sweep's document (Sweep, docs/sweep.md).
const KindSweep = "sweep"

// SweepOutcome is what a runner measured in one trial.
type SweepOutcome struct {
	// Sent is the datagrams we sent, SendErrors those the socket refused.
	Sent       int64 `json:"sent"`
	SendErrors int64 `json:"send_errors,omitempty"`
	// OfferedPPS is the rate we really offered.
	OfferedPPS float64 `json:"offered_pps"`
	// Received and Lost are the far end's counts (or, for a reflector,
	// what came back and what did not); Total is what the far end
	// expected (Received + Lost), the base of the loss percentage.
	Received int64 `json:"received"`
	Lost     int64 `json:"lost"`
	Total    int64 `json:"total"`
	// Unreported is what we sent that the far end's counts do not cover
	// (Sent − Total when positive): an iperf server counts up to the
	// highest id it saw, so datagrams lost at the end of a test are in no
	// count of its report. They count as lost here.
	Unreported int64 `json:"unreported,omitempty"`
	// MaxLagS is the furthest our sender fell behind its schedule, in
	// seconds (it then caught up in a burst); 0 when unknown.
	MaxLagS float64 `json:"max_lag_s,omitempty"`
	// StallLagsS are the deepest lags of each episode in which our sender
	// fell behind its schedule by more than a millisecond and caught up in
	// a burst, in seconds, in order (MaxLagS is the largest); nil when not
	// followed. Past the pacer's 4,096 the list stops (StallsCut), and
	// what it holds is a lower bound of the stalls and their bursts.
	StallLagsS []float64 `json:"-"`
	StallsCut  bool      `json:"-"`
	// SendSeconds and ReceiveSeconds are the two windows: first to last
	// datagram sent, and as the far end received them. 0 = unknown.
	SendSeconds    float64 `json:"send_s"`
	ReceiveSeconds float64 `json:"receive_s,omitempty"`
	// BacklogS is how far the far end fell behind our pace over the
	// trial, in seconds: a queue that filled (and would drop in a longer
	// trial). Runners measure it as the rise of the round-trip time from
	// the start of the trial to its end (reflector), or as the receive
	// window's excess over the send window (server report). BacklogKnown
	// says whether it was measured.
	BacklogS     float64 `json:"backlog_s"`
	BacklogKnown bool    `json:"-"`
	// ServicePPS is, for a reflector, the rate the far end delivered at
	// while it held a queue (the spacing of what came back that had
	// waited); 0 when it held none long enough to time. The backlog is
	// then the queue a far end of that rate builds at our offered rate.
	ServicePPS float64 `json:"service_pps,omitempty"`
	// RTT is the round-trip time where the far end reflects.
	RTT *SweepRTT `json:"rtt_ms,omitempty"`
	// RTTs are the round-trip times of a uniform sample of what came
	// back, in arrival order, where the far end reflects: every
	// RTTStep-th datagram, at most reflectrun.SampleSize of them (not in
	// the JSON: RTT summarises every datagram).
	RTTs    []time.Duration `json:"-"`
	RTTStep int64           `json:"-"`
	// RTTDist is the distribution of every round trip that came back
	// (count, min, mean, max exact; percentiles and bins from a
	// histogram to within 0.1 %), where the far end reflects.
	RTTDist *RTTSummary `json:"-"`
	// Arrivals are the kernel receive times, since the first, of the
	// last reflectrun.TickWindow datagrams that came back, consecutive
	// (not in the JSON: a diagnosis looks in them for a timer tick).
	Arrivals []time.Duration `json:"-"`
	// Transit is the far end's summary of one-way transit times (a
	// wirebench server's report), clock offset included; nil when it sent
	// none.
	Transit *Transit `json:"transit_us,omitempty"`
	// HostDrops counts datagrams our own host dropped (receive buffer
	// overflow of a reflect run's socket): not the device's loss.
	HostDrops int64 `json:"host_drops,omitempty"`
	// NoReport says the far end's counts never came (no server report, or
	// nothing came back from a reflector): Received and Lost are then 0
	// and the trial counts as all lost.
	NoReport bool `json:"no_report,omitempty"`
	// CountedBy says whose counts Received and Lost are: CountedByPeer
	// (the far end's report to our client) or CountedByDevice (the
	// device's own report, read from its shell, when the dialect brings
	// no report back); "" when neither came or the far end reflects.
	CountedBy string `json:"counted_by,omitempty"`
	// Device is the device's own figures for the trial (--dut), absent
	// fields omitted; its transcript is left out here (it is the whole
	// session's, in Sweep.Device).
	Device *Device `json:"device,omitempty"`
	// Warnings are the runner's: why a figure may not be trusted.
	Warnings []string `json:"warnings,omitempty"`
}

// Who counted a trial's received and lost datagrams (SweepOutcome.CountedBy).
const (
	CountedByPeer   = "peer_report" // the far end's report to our client
	CountedByDevice = "device"      // the device's own report, from its shell
)

// SweepRTT summarises round-trip times in milliseconds.
type SweepRTT struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// SweepTrial is one trial of a search, as it appears in the JSON.
type SweepTrial struct {
	Repeat  int     `json:"repeat"`
	RatePPS float64 `json:"rate_pps"`
	// Confirm marks a confirming trial: the final trial of the full length
	// (--confirm) that a reported rate held in.
	Confirm bool `json:"confirm,omitempty"`
	// Phase is the multi-rate search's phase the trial ran in (1 first,
	// its trials the shortest; the last one's are the final, confirming
	// trials); absent for a trial of sweep's own search.
	Phase int `json:"phase,omitempty"`
	// TrialS and TrialPackets are the length the trial was asked for:
	// seconds, or datagrams (with --packets).
	TrialS       float64 `json:"trial_s,omitempty"`
	TrialPackets int64   `json:"trial_packets,omitempty"`
	Verdict      string  `json:"verdict"`
	// Reused marks a trial listed under another criterion's search too
	// (RFC 2544's PDR: the trials of the one search that found the NDR
	// and the PDR, judged under the PDR's criterion), not run again.
	Reused bool `json:"reused,omitempty"`
	// DeliveredPPS is the rate the far end delivered: its count over its
	// own receive window (see sweep.Config.Verdict).
	DeliveredPPS float64 `json:"delivered_pps"`
	SweepOutcome
}

// SweepRepeats are a size's repetitions, with a 95 % confidence interval of the
// mean rate (Student's t).
type SweepRepeats struct {
	N        int       `json:"n"`
	RatesPPS []float64 `json:"rates_pps"`
	MeanPPS  float64   `json:"mean_pps"`
	// CILowPPS and CIHighPPS bound the 95 % confidence interval;
	// CIPercent is its half-width as a share of the mean, in percent.
	CILowPPS  float64 `json:"ci95_low_pps"`
	CIHighPPS float64 `json:"ci95_high_pps"`
	CIPercent float64 `json:"ci95_percent"`
	// Unstable marks a spread too wide to trust (CIPercent above
	// sweep.UnstableCIPercent, or repetitions that disagree on limited_by_host).
	Unstable bool `json:"unstable"`
}

// SweepSize is one size's result.
type SweepSize struct {
	Size int `json:"size"`
	// Sent is the datagrams sent in the trial that confirmed the rate.
	Sent int64 `json:"sent"`
	// RatePPS is what the far end delivered in the trial that confirmed
	// the highest passing rate: its count over its own receive window
	// (the mean over repetitions); RateBPS the same in payload bit/s.
	// TriedPPS is the rate that trial offered (asked of our sender).
	// When no rate passed (Found false) both are absent from the JSON:
	// the rate lies below the lowest tried, and no passing trial
	// delivers 0, so omitempty leaves out exactly the unknown ones.
	RatePPS  float64 `json:"rate_pps,omitempty"`
	RateBPS  float64 `json:"rate_bps,omitempty"`
	TriedPPS float64 `json:"tried_pps"`
	// Found says a rate passed at all (text prints "none" when not).
	Found bool `json:"found"`
	// HeldS is the length of the trial the rate held for: the confirming
	// trial's (sweep.Config.Confirm), or a search trial's when no confirmation
	// passed (the shortest over repetitions).
	HeldS float64 `json:"held_s"`
	// LossPercent is the loss of the confirming trial; null when there
	// is none (no rate passed: nothing was confirmed).
	LossPercent *float64 `json:"loss_percent"`
	// Trials is how many trials the searches of this size took.
	Trials int `json:"trials"`
	// PercentOfLine is RatePPS as a share of the medium's maximum packet
	// rate (the size sweep's column); null when no medium is known.
	PercentOfLine *float64 `json:"percent_of_line"`
	LinePPS       float64  `json:"line_pps,omitempty"`
	// LimitedByHost says this host could not send fast enough to find the
	// device's limit: RatePPS is a lower bound, not the device's figure.
	LimitedByHost bool `json:"limited_by_host"`
	// Confirmed is false when no confirming trial passed within the trial
	// budget (the rate is then the best seen, and a warning says so).
	Confirmed bool `json:"confirmed"`
	// Status is "ok", or "suspect" when RatePPS is more than 0.1 % above
	// the medium's packet rate (PercentOfLine over 100.1): Reason says why.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// AtMax says the rate is the highest the search was allowed to try.
	AtMax bool `json:"at_max,omitempty"`
	// RTT is the confirming trial's round-trip time, where the far end
	// reflects.
	RTT *SweepRTT `json:"rtt_ms,omitempty"`
	// CountedBy and Device are the confirming trial's (see SweepOutcome): who
	// counted the loss it was judged on, and the device's own figures
	// (--dut).
	CountedBy string  `json:"counted_by,omitempty"`
	Device    *Device `json:"device,omitempty"`
	// Bisected marks a size added by cliff bisection.
	Bisected bool `json:"bisected,omitempty"`
	// Interrupted marks the size under way when the sweep was stopped
	// (Sweep.Unfinished): its trials are kept, its search did not end.
	Interrupted bool          `json:"interrupted,omitempty"`
	Repeats     *SweepRepeats `json:"repeats,omitempty"`
	// TrialLog is every trial of this size.
	TrialLog []SweepTrial `json:"trial_log"`
	Warnings []string     `json:"warnings,omitempty"`
}

// SweepCliff is a fall of the byte rate between two sizes.
type SweepCliff struct {
	// Below is the last size before the fall, Above the first after it;
	// Above = Below + 1 when the sizes were bisected to the byte.
	Below        int     `json:"below"`
	Above        int     `json:"above"`
	RateBelowPPS float64 `json:"rate_below_pps"`
	RateAbovePPS float64 `json:"rate_above_pps"`
	// Exact says Above = Below + 1.
	Exact bool   `json:"exact"`
	Hint  string `json:"hint"`
}

// Sweep is a sweep's document (schema wirebench/1, kind "sweep").
type Sweep struct {
	Schema  string `json:"schema"`
	Kind    string `json:"kind"`
	Version string `json:"version,omitempty"`
	// RunID is the id the results store saved this run as, in the
	// printed document only (left out when the run was not saved).
	RunID     int64        `json:"run_id,omitempty"`
	StartedAt time.Time    `json:"started_at"`
	Test      SweepTest    `json:"test"`
	Sizes     []SweepSize  `json:"sizes"`
	Cliffs    []SweepCliff `json:"cliffs"`
	Seconds   float64      `json:"duration_s"`
	Warnings  []string     `json:"warnings"`
	// SenderPacing says how this host's paced sender was scheduled:
	// real-time (and its bounds) or normal priority and why (the
	// priority package's words); empty when no paced send ran here.
	SenderPacing string `json:"sender_pacing,omitempty"`
	// Interrupted says the sweep was stopped (Ctrl-C) before it finished:
	// the sizes above are those finished until then.
	Interrupted bool   `json:"interrupted,omitempty"`
	Error       string `json:"error,omitempty"`
	// Unfinished is the size whose search an error or an interrupt ended,
	// with the trials it ran (marked Interrupted when the sweep was
	// stopped): evidence, not a result (absent when every size finished,
	// or when the size under way had no finished trial).
	Unfinished *SweepSize `json:"unfinished,omitempty"`
	// Device is the session with the device's shell (--dut): which shell,
	// and the transcript of every trial's commands and reports.
	Device *SweepDeviceSession `json:"device,omitempty"`
}

// SweepDeviceSession is the record of a sweep's session with the device's
// shell.
type SweepDeviceSession struct {
	// Spec is the --dut line (serial:, telnet:, cmd:), Shell the adapter.
	Spec  string `json:"spec"`
	Shell string `json:"shell,omitempty"`
	// Error says why the session failed, when it did.
	Error string `json:"error,omitempty"`
	// Transcript is the whole session, both directions, timestamped.
	Transcript []string `json:"transcript"`
}

// SweepTest describes what a sweep was asked, for the document.
type SweepTest struct {
	Mode        string  `json:"mode"`
	Host        string  `json:"host"`
	Port        int     `json:"port"`
	Medium      string  `json:"medium,omitempty"`
	LossPercent float64 `json:"loss_percent"`
	TrialS      float64 `json:"trial_s,omitempty"`
	Packets     int64   `json:"packets,omitempty"`
	// ConfirmS is sweep.Config.Confirm in seconds (0: the confirming trial is
	// as long as the others).
	ConfirmS float64 `json:"confirm_s"`
	MaxRate  string  `json:"max_rate,omitempty"`
	Repeat   int     `json:"repeat"`
	Bisect   bool    `json:"bisect"`
	Sizes    []int   `json:"sizes"`
	// Dialect is our client's dialect where it is not the default
	// (a device's server may need iperf2-legacy).
	Dialect string `json:"dialect,omitempty"`
	// DialectChosenBy says how the dialect was chosen ("flag", "port",
	// "probe", "fallback"); DialectReason what the probe saw.
	DialectChosenBy string `json:"dialect_chosen_by,omitempty"`
	DialectReason   string `json:"dialect_reason,omitempty"`
	// DUT is the --dut line when the device's own shell started its
	// server for every trial.
	DUT string `json:"dut,omitempty"`
}
