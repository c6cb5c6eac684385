package reason

import (
	"fmt"
	"math"
	"slices"

	"github.com/wirebench/wirebench/internal/result"
)

// lossFloor tells a loss that does not fall with the rate (the link drops)
// from loss under overload (a queue overflows).
func (r *reasoner) lossFloor() {
	var low []result.DiagnosisRun
	for _, run := range r.in.Runs {
		if run.Purpose == result.DiagnoseLowRate && run.Sent > 0 {
			low = append(low, run)
		}
	}
	if len(low) == 0 {
		r.cannot("a loss floor: no run at a low rate was made")
		return
	}
	var sent, lost int64
	var ids []int
	for _, run := range low {
		sent, lost = sent+run.Sent, lost+max(run.Sent-run.Received, 0)
		ids = append(ids, run.ID)
	}
	pct := 100 * float64(lost) / float64(sent)
	if pct < FloorLoss || lost < FloorLost {
		if r.overloadLoss() {
			r.cannot("a loss floor: none; %.3f %% lost at %s datagrams/s, so the loss seen under load is overload (a queue overflowing), not the link", pct, num(low[len(low)-1].SentPPS))
		}
		return
	}
	// The 95 % interval of a share from a count (normal approximation).
	half := 196 * math.Sqrt(float64(lost)*(1-pct/100)) / float64(sent)
	conf := result.ConfidenceHigh
	if lost < 50 {
		conf = result.ConfidenceMedium
	}
	rate := low[len(low)-1].SentPPS
	text := fmt.Sprintf("Loss floor: %.2f %% ± %.2f of datagrams are lost even at %s datagrams/s, well under any limit: the link drops them, no queue does.",
		pct, half, num(rate))
	r.add(result.FindingLossFloor, conf, map[string]float64{"loss_percent": pct}, ids, text)
}

// overloadLoss says a limited load run lost datagrams.
func (r *reasoner) overloadLoss() bool {
	for _, run := range r.in.Runs {
		if Limited(run) && run.LossPercent > FloorLoss {
			return true
		}
	}
	return false
}

// queue records how long the far end holds datagrams when pushed past its
// limit: the rise of the round trip from its lowest to the late part of a
// run: of the queue runs (twice the limit, long enough to fill the queue)
// and of the runs that stand for the sizes that hit a limit (Best; not a
// run this host spoiled, which can look like a queue where there is
// none). Only a run that lost datagrams and whose round trip had settled
// was full; without one, the longest is a lower bound: a queue still
// filling when a run ends is shorter by the time it had left to fill.
func (r *reasoner) queue() {
	var runs []result.DiagnosisRun
	for _, run := range r.in.Runs {
		if run.Purpose == result.DiagnoseQueue && run.RTTLateMs > 0 {
			runs = append(runs, run)
		}
	}
	for _, p := range r.points() {
		if p.run.RTTLateMs > 0 {
			runs = append(runs, p.run)
		}
	}
	var full, qs []float64
	var fullIDs, ids []int
	for _, run := range runs {
		q := run.RTTLateMs - run.RTTMinMs
		qs, ids = append(qs, q), append(ids, run.ID)
		if run.RTTSettled && run.LossPercent > 1 {
			full, fullIDs = append(full, q), append(fullIDs, run.ID)
		}
	}
	if len(full) > 0 {
		slices.Sort(full)
		slices.Sort(fullIDs)
		if q := full[len(full)/2]; q >= MinQueueMs {
			r.add(result.FindingQueue, result.ConfidenceHigh, map[string]float64{"queue_ms": q}, fullIDs,
				fmt.Sprintf("Queue: under load the device buffers about %.0f ms in front of its limit before it drops: the delay it adds when full (bufferbloat).", q))
		}
		return
	}
	if len(qs) == 0 {
		return
	}
	q := slices.Max(qs)
	if q < MinQueueMs {
		return
	}
	r.add(result.FindingQueue, result.ConfidenceLow, map[string]float64{"queue_ms": q}, ids,
		fmt.Sprintf("Queue: under load the device buffered at least %.0f ms in front of its limit; its queue had not filled by the end of the runs (still rising, or nothing dropped), so it may be longer.", q))
}

// direction compares upload and download runs.
func (r *reasoner) direction() {
	up, upID := r.best(result.DiagnoseUpload)
	down, downID := r.best(result.DiagnoseDownload)
	if up == 0 && down == 0 {
		return
	}
	if up == 0 || down == 0 {
		r.cannot("the direction: only one direction was measured")
		return
	}
	upS, downS := r.atLeast(result.DiagnoseUpload, upID, up), r.atLeast(result.DiagnoseDownload, downID, down)
	text := fmt.Sprintf("Direction: upload %s, download %s: the two directions are alike.", upS, downS)
	if lo, hi := min(up, down), max(up, down); lo < 0.9*hi {
		slow := "download"
		if up < down {
			slow = "upload"
		}
		text = fmt.Sprintf("Direction: upload %s, download %s: %s is the slower, at %.0f %% of the other.", upS, downS, slow, 100*lo/hi)
	}
	r.add(result.FindingDirection, result.ConfidenceMedium,
		map[string]float64{"upload_bits_per_second": up, "download_bits_per_second": down}, []int{upID, downID}, text)
}

// atLeast is bps in words, "at least" when run id carried 95 % or more of
// the payload rate asked of it: the far end kept up, so its limit lies
// above what was asked.
func (r *reasoner) atLeast(purpose string, id int, bps float64) string {
	for _, run := range r.in.Runs {
		if run.ID == id && run.Purpose == purpose && run.AskedPPS > 0 && bps >= LimitedShare*run.AskedPPS*float64(run.Size)*8 {
			return "at least " + mbit(bps) + " (all that was asked)"
		}
	}
	return mbit(bps)
}

// best is the highest goodput of the runs of purpose, and its run.
func (r *reasoner) best(purpose string) (float64, int) {
	var bps float64
	id := 0
	for _, run := range r.in.Runs {
		if run.Purpose == purpose && run.BitsPerSecond > bps {
			bps, id = run.BitsPerSecond, run.ID
		}
	}
	return bps, id
}

// tcp explains a TCP figure below the UDP capacity by loss (segments sent
// again, or a loss floor), or, with nothing lost, by the window over the
// round trip.
func (r *reasoner) tcp() {
	tcp, tcpID := r.best(result.DiagnoseTCP)
	if tcp == 0 {
		return
	}
	// The UDP capacity: an upload run's, or the most UDP payload a load
	// run delivered.
	udp, udpID := r.best(result.DiagnoseUpload)
	for _, run := range r.in.Runs {
		if g := run.DeliveredPPS * float64(run.Size) * 8; run.Purpose == result.DiagnoseLoad && g > udp {
			udp, udpID = g, run.ID
		}
	}
	if udp == 0 {
		r.cannot("TCP against UDP: no UDP capacity was measured to compare the TCP figure with")
		return
	}
	if tcp >= 0.9*udp {
		return
	}
	var run result.DiagnosisRun
	for _, x := range r.in.Runs {
		if x.ID == tcpID {
			run = x
		}
	}
	by, why := "unexplained", "neither loss nor the window over the round trip explains it"
	switch {
	case run.Retransmits > 0 || r.find(result.FindingLossFloor) != nil:
		by, why = "loss", fmt.Sprintf("it lost segments (%d sent again) and backed off", run.Retransmits)
		if run.Retransmits == 0 {
			why = "the loss floor makes TCP back off"
		}
	case run.WindowBytes > 0 && run.RTTMs > 0 && run.WindowBytes*8/(run.RTTMs/1000) <= 1.1*tcp:
		by = "window"
		why = fmt.Sprintf("with nothing lost, a window of %s bytes over a round trip of %.1f ms carries at most %s", num(run.WindowBytes), run.RTTMs, mbit(run.WindowBytes*8/(run.RTTMs/1000)))
	}
	f := r.add(result.FindingTCPBelowUDP, result.ConfidenceMedium,
		map[string]float64{"tcp_bits_per_second": tcp, "udp_bits_per_second": udp}, []int{tcpID, udpID},
		fmt.Sprintf("TCP: %s, %.0f %% of the %s UDP carries: %s.", mbit(tcp), 100*tcp/udp, mbit(udp), why))
	f.Words = map[string]string{"explained_by": by}
}
