package diagnose

import (
	"context"
	"fmt"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// DirectionFunc runs one UDP test of size bytes at pps datagrams/s for
// length against a server: ours to it (upload), or, with download, its to
// us (the server sends on our connection, -R).
type DirectionFunc func(ctx context.Context, download bool, size int, pps float64, length time.Duration) (*result.Result, error)

// directions runs a UDP upload and a UDP download at the largest size,
// each asked what the first load run was (the medium's packet rate or
// --max-rate, whichever is lower), for the direction finding. A download
// the server refuses is said in a warning and the plan goes on: the
// direction is then not compared.
func (d *diagnoser) directions(ctx context.Context) error {
	if d.cfg.Direction == nil || len(d.cfg.Sizes) == 0 {
		return nil
	}
	size := d.cfg.Sizes[len(d.cfg.Sizes)-1]
	pps := d.ask(size, nil)
	length := max(d.cfg.Trial, time.Second)
	for _, down := range []bool{false, true} {
		if d.left() < d.cfg.Gap+length+d.cfg.Overhead {
			return errBudget
		}
		if err := d.cfg.Sleep(ctx, d.cfg.Gap); err != nil {
			return err
		}
		started := time.Now()
		res, err := d.cfg.Direction(ctx, down, size, pps, length)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		purpose := result.DiagnoseUpload
		if down {
			purpose = result.DiagnoseDownload
		}
		if err == nil && (res == nil || res.Receiver == nil) {
			err = orNoResult(nil)
			if res != nil && res.Error != "" {
				err = fmt.Errorf("%s", res.Error)
			}
		}
		if err != nil {
			d.doc.Warnings = append(d.doc.Warnings, fmt.Sprintf("the %s run could not be made (%v), so the two directions are not compared", purpose, err))
			return nil
		}
		d.record(directionRun(len(d.doc.Runs)+1, purpose, size, pps, started, res), res)
	}
	return nil
}

// directionRun is the diagnosis run of a directional test: what arrived
// (the receiver's count: the server's report of an upload, ours of a
// download).
func directionRun(id int, purpose string, size int, pps float64, started time.Time, res *result.Result) result.DiagnosisRun {
	run := result.DiagnosisRun{ID: id, Purpose: purpose, Size: size, AskedPPS: pps, StartedAt: started.UTC(), Warnings: res.Warnings}
	rc := res.Receiver
	run.BitsPerSecond, run.Received = rc.BitsPerSecond, rc.Packets
	run.Sent = rc.Packets + rc.Lost
	if s := res.Sender; s != nil && s.Packets > 0 {
		run.Sent = s.Packets
	}
	if run.Sent > 0 {
		run.LossPercent = 100 * float64(max(run.Sent-run.Received, 0)) / float64(run.Sent)
	}
	if rc.Seconds > 0 {
		run.DeliveredPPS = float64(rc.Packets) / rc.Seconds
	}
	if s := res.Sender; s != nil && s.Seconds > 0 {
		run.SentPPS = float64(s.Packets) / s.Seconds
	}
	return run
}

// record adds run, with its own result document res when it has one (to
// be saved as it is), and tells OnRun.
func (d *diagnoser) record(run result.DiagnosisRun, res *result.Result) {
	if d.cfg.Results != nil && res != nil {
		d.cfg.Results[run.ID] = res
	}
	d.doc.Runs = append(d.doc.Runs, run)
	if d.cfg.OnRun != nil {
		p := Progress{Run: run}
		if !d.deadline.IsZero() {
			p.Left = max(d.left(), 0)
		}
		d.cfg.OnRun(p)
	}
}
