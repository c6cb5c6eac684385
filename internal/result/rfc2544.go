package result

import "time"

// KindRFC2544 is the "kind" of an RFC 2544 run's document (RFC2544,
// docs/rfc2544.md).
const KindRFC2544 = "rfc2544"

// The RFC 2544 tests, as named in --tests and the JSON.
const (
	RFC2544TestThroughput = "throughput"
	RFC2544TestLatency    = "latency"
	RFC2544TestLoss       = "loss"
	RFC2544TestBackToBack = "backtoback"
)

// Latency kinds (RFC2544LatencyPoint.Kind).
const (
	RFC2544RoundTrip = "round_trip" // reflector: out and back
	// RFC2544OneWay is a wirebench server's transit times (its receive
	// time minus our send stamp) when both ends read the same clock.
	RFC2544OneWay = "one_way"
	// RFC2544DelayVariation is the same on clocks that may differ: each
	// trial's minimum is subtracted, so the figures are the delay above
	// the fastest datagram's, not a delay.
	RFC2544DelayVariation = "delay_variation"
)

// RFC2544Schedule is how long each kind of trial lasts.
type RFC2544Schedule struct {
	// Search and Confirm are the throughput search's trials and the
	// trial that confirms its result (the long, final one).
	Search  time.Duration `json:"-"`
	Confirm time.Duration `json:"-"`
	// Latency is one latency trial; LatencyRepeats how many are run per
	// load (their figures averaged).
	Latency        time.Duration `json:"-"`
	LatencyRepeats int           `json:"latency_repeats"`
	// LatencyFromConfirm says the latency point at 100 % of the NDR is
	// the throughput search's confirming trial at the NDR (a Confirm-long
	// trial at that rate, RFC 2544 §26.2's throughput rate) rather than a
	// trial of its own; only with one trial per load.
	LatencyFromConfirm bool `json:"latency_100_from_confirm"`
	// Loss is one step of the frame loss test. A step at the rate and of
	// the length of a throughput search trial (the first, at the medium's
	// maximum rate, when Loss equals Search) is that trial, not run again.
	Loss time.Duration `json:"-"`
	// BurstRepeats is how many back-to-back searches run per size (their
	// lengths averaged); MaxBurst caps a burst's length in frames.
	BurstRepeats int   `json:"burst_repeats"`
	MaxBurst     int64 `json:"max_burst_frames"`
	// The same lengths in seconds, for the document.
	SearchS  float64 `json:"search_trial_s"`
	ConfirmS float64 `json:"confirm_trial_s"`
	LatencyS float64 `json:"latency_trial_s"`
	LossS    float64 `json:"loss_trial_s"`
}

// RFC2544Test describes what was asked, for the document.
type RFC2544Test struct {
	Mode       string          `json:"mode"`
	Host       string          `json:"host"`
	Port       int             `json:"port"`
	Medium     string          `json:"medium"`
	Sizes      []int           `json:"sizes"`
	Tests      []string        `json:"tests"`
	PDRPercent float64         `json:"pdr_percent"`
	Loads      []float64       `json:"latency_loads_percent"`
	Strict     bool            `json:"strict"`
	Schedule   RFC2544Schedule `json:"schedule"`
	// Clock says, for a wirebench server, whether it reads our clock
	// (RFC2544ClockShared: its transit times are one-way latency) or may not
	// (RFC2544ClockSeparate: delay variation only), and ClockWhy how that was
	// decided; empty for the other modes.
	Clock    string `json:"clock,omitempty"`
	ClockWhy string `json:"clock_why,omitempty"`
}

// RFC2544Test.Clock values.
const (
	RFC2544ClockShared   = "shared"
	RFC2544ClockSeparate = "separate"
)

// RFC2544 is an RFC 2544 run's document (schema wirebench/1, kind
// KindRFC2544).
type RFC2544 struct {
	Schema  string `json:"schema"`
	Kind    string `json:"kind"`
	Version string `json:"version,omitempty"`
	// RunID is the id the results store saved this run as, in the
	// printed document only (left out when the run was not saved).
	RunID     int64     `json:"run_id,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Seconds   float64   `json:"seconds"`
	// SenderPacing says how this host's paced sender was scheduled:
	// real-time (and its bounds) or normal priority and why (the
	// priority package's words); empty when no paced send ran here.
	SenderPacing string        `json:"sender_pacing,omitempty"`
	Test         RFC2544Test   `json:"test"`
	Sizes        []RFC2544Size `json:"sizes"`
	// Interrupted says the run was stopped (Ctrl-C): what finished is
	// kept; a test cut short is absent from its size.
	Interrupted bool     `json:"interrupted"`
	Error       string   `json:"error,omitempty"`
	Warnings    []string `json:"warnings"`
}

// RFC2544Size is one size's results; a test not run (or not finished) has
// its fields zero and its detail absent.
type RFC2544Size struct {
	Size int `json:"size"`
	// LateWaitS is, against a reflector, how long the latency, frame loss
	// and back-to-back trials listened for late answers after their last
	// send when something had not come back: four times the slowest round
	// trip of the size's throughput trials, 0.1 to 0.5 s (absent: the
	// runner's own, 0.5 s).
	LateWaitS float64 `json:"late_wait_s,omitempty"`
	// LinePPS is the medium's maximum packet rate for the size.
	LinePPS float64 `json:"line_pps"`
	// NDRPPS and PDRPPS are the no-drop and partial-drop rates (what the
	// far end delivered, datagrams/s); NDRBPS and PDRBPS the same in UDP
	// payload bit/s. A rate that was not found is absent from the JSON
	// (no rate tried passed: it lies below the lowest tried, which is not
	// 0), and no passing trial ever delivers 0, so omitempty leaves out
	// exactly the unknown ones.
	NDRPPS float64 `json:"ndr_pps,omitempty"`
	PDRPPS float64 `json:"pdr_pps,omitempty"`
	NDRBPS float64 `json:"ndr_bps,omitempty"`
	PDRBPS float64 `json:"pdr_bps,omitempty"`
	// NDRFound and PDRFound say whether a rate passed at all (text, CSV
	// and the HTML report print "none" or leave the value empty when not).
	NDRFound bool `json:"ndr_found"`
	PDRFound bool `json:"pdr_found"`
	// NDR and PDR are the searches, with every trial.
	NDR *SweepSize `json:"ndr,omitempty"`
	PDR *SweepSize `json:"pdr,omitempty"`
	// DiscountedTrials counts the throughput trials that lost while this
	// host spoiled them (its sender stalled for longer than the far end's
	// queue absorbs, or its own socket dropped): not counted as the far
	// end's loss; Discounted lists them, each with its reason.
	DiscountedTrials int                 `json:"discounted_trials"`
	Discounted       []RFC2544Discounted `json:"discounted,omitempty"`
	// Latency are the latency test's points; LatencyNote says why there
	// are none, or what they measure when it is not a round trip.
	Latency     []RFC2544LatencyPoint `json:"latency"`
	LatencyNote string                `json:"latency_note,omitempty"`
	// LossCurve is the frame loss test's steps.
	LossCurve []RFC2544LossPoint `json:"loss_curve"`
	// BackToBackFrames is the longest burst at line rate carried without
	// loss (the mean over the searches), BackToBackUS its line time in
	// microseconds; RFC2544BackToBack the searches.
	BackToBackFrames float64            `json:"back_to_back_frames"`
	BackToBackUS     float64            `json:"back_to_back_us"`
	BackToBack       *RFC2544BackToBack `json:"back_to_back,omitempty"`
	// Done lists the tests this size finished.
	Done     []string `json:"done"`
	Warnings []string `json:"warnings"`
}

// RFC2544LatencyPoint is the latency at one load.
type RFC2544LatencyPoint struct {
	LoadPercent float64 `json:"load_percent"`
	// RatePPS is the rate asked for, OfferedPPS what this host sent.
	RatePPS    float64 `json:"rate_pps"`
	OfferedPPS float64 `json:"offered_pps"`
	Kind       string  `json:"kind"`
	// Repeats is how many trials were averaged (RFC 2544: 20), TrialS
	// the length of each.
	Repeats int     `json:"repeats"`
	TrialS  float64 `json:"trial_s"`
	// FromThroughput says the point is the throughput search's confirming
	// trial at the NDR (RFC2544Schedule.LatencyFromConfirm), not a trial
	// of its own.
	FromThroughput bool  `json:"from_throughput,omitempty"`
	Sent           int64 `json:"sent"`
	Lost           int64 `json:"lost"`
	// The statistics in milliseconds: of the one trial, or the average of
	// the repeats' (each from its own histogram).
	// MeanMS is absent for the transit kinds: the server's summary has
	// no mean.
	MinMS  float64 `json:"min_ms"`
	MeanMS float64 `json:"mean_ms,omitempty"`
	P50MS  float64 `json:"p50_ms"`
	P90MS  float64 `json:"p90_ms"`
	P99MS  float64 `json:"p99_ms"`
	P999MS float64 `json:"p99_9_ms"`
	MaxMS  float64 `json:"max_ms"`
	// Timed is how many datagrams the figures cover (all repeats).
	Timed int64 `json:"timed"`
	// Histogram is every datagram of every repeat, in coarse bins (empty
	// for the transit kinds: the server sends a summary only).
	Histogram []RTTBin `json:"histogram"`
	// HostLimited says this host did not offer the rate asked for.
	HostLimited bool `json:"host_limited,omitempty"`
}

// RFC2544LossPoint is one step of the frame loss test.
type RFC2544LossPoint struct {
	// OfferedPercent is the step, a share of the medium's maximum rate;
	// RatePPS the rate asked for; OfferedPPS what this host really sent.
	OfferedPercent float64 `json:"offered_percent"`
	RatePPS        float64 `json:"rate_pps"`
	OfferedPPS     float64 `json:"offered_pps"`
	Sent           int64   `json:"sent"`
	Lost           int64   `json:"lost"`
	LossPercent    float64 `json:"loss_percent"`
	// SendS is the time from the first datagram sent to the last;
	// SenderLagMS the furthest this host fell behind its schedule (a
	// stall longer than the far end's queue lets its link idle, and it
	// then loses more than its rate accounts for).
	SendS       float64 `json:"send_s"`
	SenderLagMS float64 `json:"sender_lag_ms"`
	// HostLimited says this host sent less than 99 % of the rate asked.
	HostLimited bool `json:"host_limited,omitempty"`
	// FromThroughput says the step is a throughput search trial of the
	// same rate and length, not run again.
	FromThroughput bool `json:"from_throughput,omitempty"`
}

// RFC2544BackToBack is a size's back-to-back test: the searches for the longest
// burst at line rate carried without loss.
type RFC2544BackToBack struct {
	Searches []RFC2544BurstSearch `json:"searches"`
	// MinFrames and MaxFrames are the shortest and longest result over
	// the searches.
	MinFrames int64 `json:"min_frames"`
	MaxFrames int64 `json:"max_frames"`
	// AtLineRate is false when a burst that lost nothing was sent slower
	// than the medium's line rate (under 99 % of it) in each of its three
	// tries: the far end then had time to drain, and the length is an
	// upper bound of what it carries at line rate.
	AtLineRate bool `json:"at_line_rate"`
	// SlowestPercent is the slowest burst's rate as a share of line rate.
	SlowestPercent float64 `json:"slowest_percent_of_line"`
	// Capped says no burst up to RFC2544Schedule.MaxBurst was lost: the far end
	// carries at least that.
	Capped bool `json:"capped,omitempty"`
	// DiscountedBursts counts bursts that lost while our sender fell
	// behind the line rate's schedule and caught up faster than the
	// medium (sent again); HostSpoiled says some burst length was spoiled
	// in every try and counted as lost: the length is then a lower bound.
	DiscountedBursts int  `json:"discounted_bursts,omitempty"`
	HostSpoiled      bool `json:"host_spoiled,omitempty"`
	// Bound is what the bursts say of the far end's longest burst at
	// line rate without loss, one of the RFC2544Bound values: exact (the
	// frames figure as measured), or, when this host's sending qualifies
	// the search (AtLineRate false, HostSpoiled, Capped), what only the
	// bursts that count show: at least AtLeastFrames (the longest that
	// went at line rate and lost nothing), at most AtMostFrames (one less
	// than the shortest that lost with no stall of this host's), between
	// the two, or not measured (neither). The frames figure of a search
	// so qualified is no result: the text and HTML tables print the bound.
	Bound         string `json:"bound,omitempty"`
	AtLeastFrames int64  `json:"at_least_frames,omitempty"`
	AtMostFrames  int64  `json:"at_most_frames,omitempty"`
}

// RFC2544BackToBack.Bound values.
const (
	RFC2544BoundExact       = "exact"
	RFC2544BoundAtLeast     = "at_least"
	RFC2544BoundAtMost      = "at_most"
	RFC2544BoundBetween     = "between"
	RFC2544BoundNotMeasured = "not_measured"
)

// RFC2544Discounted is one throughput trial this host spoiled.
type RFC2544Discounted struct {
	// Search is "NDR" or "PDR"; RatePPS the rate asked, TrialS the trial's
	// length, Lost what the far end did not deliver.
	Search  string  `json:"search"`
	RatePPS float64 `json:"rate_pps"`
	TrialS  float64 `json:"trial_s"`
	Lost    int64   `json:"lost"`
	// SenderLagMS is how far our sender fell behind its schedule;
	// QueueMS the far end's queue room as the size's trials showed it
	// (the smallest 99th percentile round trip over the median of a trial
	// that lost; 0: unknown).
	SenderLagMS float64 `json:"sender_lag_ms"`
	QueueMS     float64 `json:"queue_ms,omitempty"`
	HostDrops   int64   `json:"host_drops,omitempty"`
	Reason      string  `json:"reason"`
	// Then is what followed: "run_again" (the rate was tried once more),
	// "host_limited" (spoiled every time: the rate counts as one this host
	// could not test, a failure of this host's, not the far end's) or
	// "search_ended" (out of trials or interrupted).
	Then string `json:"then"`
}

// RFC2544BurstSearch is one search: the bursts sent and the longest that lost
// nothing.
type RFC2544BurstSearch struct {
	Frames int64          `json:"frames"`
	Bursts []RFC2544Burst `json:"bursts"`
}

// RFC2544Burst is one burst sent.
type RFC2544Burst struct {
	Frames     int64   `json:"frames"`
	OfferedPPS float64 `json:"offered_pps"`
	Lost       int64   `json:"lost"`
	// SenderLagMS is how far our sender fell behind the line rate's
	// schedule; Discounted says the burst lost while it did, and was sent
	// again.
	SenderLagMS float64 `json:"sender_lag_ms,omitempty"`
	Discounted  bool    `json:"discounted,omitempty"`
}

// burstTries is how often a burst this host sent below line rate is sent
