package diagnose

import (
	"context"
	"fmt"

	"github.com/wirebench/wirebench/internal/diagnose/reason"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
	"github.com/wirebench/wirebench/internal/units"
)

// runDocument is the test document (kind test) a diagnosis run is saved
// as, so that compare, report and check read it as any UDP test: what we
// sent, and what the far end delivered (by its own report against a
// server, by what came back against a reflector). own is the run's own
// document (a TCP, upload or download test), saved as it is.
func runDocument(t result.DiagnosisTest, run result.DiagnosisRun, own *result.Result) *result.Result {
	if own != nil {
		return own
	}
	r := result.New("client")
	r.StartedAt = run.StartedAt
	secs := 0.0
	if run.SentPPS > 0 {
		secs = float64(run.Sent) / run.SentPPS
	}
	r.Test = result.Test{Protocol: result.UDP, Direction: result.DirSend, Dialect: t.Mode, Host: t.Host, Port: t.Port,
		Duration: secs, RatePPS: run.AskedPPS, RateBPS: run.AskedPPS * float64(run.Size) * 8, Length: run.Size, Streams: 1}
	r.Sender = &result.Sender{Bytes: run.Sent * int64(run.Size), Packets: run.Sent, Seconds: secs,
		BitsPerSecond: run.SentPPS * float64(run.Size) * 8, PacketsPerSecond: run.SentPPS}
	source := "peer-report"
	if t.Mode == "reflect" {
		source = "local" // what came back, counted here
	}
	rsecs := 0.0
	if run.DeliveredPPS > 0 {
		rsecs = float64(run.Received) / run.DeliveredPPS
	}
	r.Receiver = &result.Receiver{Bytes: run.Received * int64(run.Size), Packets: run.Received, Lost: max(run.Sent-run.Received, 0),
		BitsPerSecond: run.DeliveredPPS * float64(run.Size) * 8, Seconds: rsecs, Total: run.Sent, Source: source}
	r.Warnings = append(r.Warnings, run.Warnings...)
	r.Warn("the jitter was not measured in this diagnose run: its 0 is no figure")
	return r
}

// saveRuns saves each run of doc (own: the runs' own documents) as its own test (with the saver's labels,
// diagnose=ID among them) and, when every one was saved, numbers the runs
// by their saved ids and reasons over them again, so that the findings'
// evidence_runs and the verdict name runs `show`, `compare` and `check`
// find. When one cannot be saved, the rest are not tried, the runs keep
// their own numbers and the warning is returned.
func saveRuns(ctx context.Context, saver *store.Saver, target string, cfg Config, doc *result.Diagnosis, own map[int]*result.Result) string {
	saved := make([]int64, len(doc.Runs))
	for i, run := range doc.Runs {
		r := runDocument(doc.Test, run, own[run.ID])
		summary := fmt.Sprintf("diagnose %s run, %d B at %.0f/s: delivered %.0f/s (%s), %.2f %% lost", run.Purpose, run.Size,
			run.SentPPS, run.DeliveredPPS, units.FormatBits(run.DeliveredPPS*float64(run.Size)*8), run.LossPercent)
		if own[run.ID] != nil {
			summary = fmt.Sprintf("diagnose %s run: %s", run.Purpose, report.TestSummary(r))
		}
		id, w := saver.Save(ctx, result.KindTest, target, summary, run.StartedAt, r)
		if w != "" {
			return w
		}
		saved[i] = id
	}
	for i := range doc.Runs {
		doc.Runs[i].ID, doc.Runs[i].SavedID = int(saved[i]), saved[i]
	}
	conclude(cfg, doc)
	return ""
}

// conclude reasons over doc's runs into its verdict, findings and what
// cannot be told.
func conclude(cfg Config, doc *result.Diagnosis) {
	o := reason.Reason(reason.Input{Medium: cfg.Medium, Runs: doc.Runs, Unseen: cfg.Unseen})
	doc.Verdict, doc.Findings, doc.CannotTell = o.Verdict, o.Findings, o.CannotTell
}
