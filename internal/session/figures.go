package session

import (
	"fmt"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
)

// Figures every dialect fills alike: rates, sums of streams, the sender's warnings.

// WarnSender says when the sender did not offer what was asked. behind,
// when not nil, is where our paced sender's time behind its schedule went,
// summed over its streams, and span their sending time, summed alike: a
// sender this host's egress queue held back (engine.Behind.QueueHeld)
// offered what the link took, which snd.Behind then records as the
// result, with no warning; a sender that stalled gets the warnings.
func WarnSender(r *result.Result, cfg *ClientConfig, snd *result.Sender, maxLag time.Duration, behind *engine.Behind, span time.Duration) {
	if snd.SendErrors > 0 {
		r.Warn(fmt.Sprintf("our host refused %d datagrams (socket send errors): they were not sent and are not in the counts", snd.SendErrors))
	}
	want := cfg.PPS()
	if want <= 0 || snd.Seconds <= 0 || cfg.Bytes > 0 {
		return
	}
	got := snd.PacketsPerSecond
	if got == 0 {
		got = float64(snd.Packets) / snd.Seconds
	}
	if snd.Packets > 0 { // the writes our host refused were offered on time too
		got *= float64(snd.Packets+snd.SendErrors) / float64(snd.Packets)
	}
	short, held := got < 0.99*want && r.Error == "", false // (an error ended it early and says why)
	if behind != nil {
		deficit := time.Duration(float64(span) * max(1-got/want, 0))
		held = short && behind.QueueHeld(span, deficit) && behind.HeldRate() > 0
		snd.Behind = &result.SenderBehind{InSendS: behind.InSend.Seconds(), StalledS: behind.Stalled.Seconds(),
			MaxStallMS: float64(behind.MaxStall) / 1e6, AskedBPS: want * float64(cfg.Length*8), QueueHeld: held}
		if held {
			snd.Behind.TakenBPS = behind.HeldRate() * float64(cfg.Length*8)
			snd.Behind.TakenS = behind.HeldSpan.Seconds()
		}
		if behind.RunDelayKnown {
			rd := behind.InSendRunDelay.Seconds()
			snd.Behind.InSendRunDelayS = &rd
		}
	}
	advice := pacingAdvice(snd) // said once, with the first stall warning
	if short && !held {
		r.Warn(fmt.Sprintf("the sender fell behind its pacing: it offered %.0f datagrams/s of the %.0f asked (%.1f %%)%s; the path was not tested at the requested rate%s",
			got, want, 100*got/want, stallText(behind), advice))
		advice = ""
	}
	if behind != nil && behind.MaxStall <= StallBound(want) {
		return // the lag built up in send calls, whose datagrams left at the queue's pace
	}
	if maxLag > StallBound(want) && r.Error == "" {
		r.Warn(fmt.Sprintf("the sender fell up to %v behind its schedule and caught up in bursts: the offered load was burstier than the average rate says%s", maxLag.Round(time.Microsecond), advice))
	}
}

// pacingAdvice adds to a stall warning how the sender was scheduled when it was not real-time
// (the priority package's words say why, and how to get it where something can be done).
func pacingAdvice(snd *result.Sender) string {
	if !strings.HasPrefix(snd.Pacing, "normal priority") {
		return ""
	}
	return "; the sender ran at " + snd.Pacing
}

// StallBound is the lag from which a sender of pps datagrams per second that caught up in
// a burst gets a warning: 20 ms, or 20 datagrams' intervals when that is longer.
func StallBound(pps float64) time.Duration {
	return max(20*time.Millisecond, time.Duration(20*float64(time.Second)/pps))
}

// stallText says for how long a sender was behind its schedule outside its
// send calls, when known.
func stallText(b *engine.Behind) string {
	if b == nil {
		return ""
	}
	var parts []string
	if b.Stalled > 0 {
		parts = append(parts, fmt.Sprintf("its thread did not send when datagrams were due for %v in all (the longest %v)",
			b.Stalled.Round(time.Microsecond), b.MaxStall.Round(time.Microsecond)))
	}
	if b.InSendRunDelay > 0 {
		parts = append(parts, fmt.Sprintf("it waited %v for a CPU inside its send calls", b.InSendRunDelay.Round(time.Microsecond)))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, " and ") + ", time the CPU went elsewhere"
}

// SumReceiver adds one stream's counts into a sum.
func SumReceiver(sum *result.Receiver, rr *result.Receiver) {
	first := sum.Source == ""
	sum.Source = rr.Source
	if first {
		sum.Counting = rr.Counting
	} else if sum.Counting != rr.Counting {
		sum.Counting = "" // the streams' reports disagree: no one meaning
	}
	if sum.JitterMethod == "" || rr.JitterMethod == result.JitterPerBatch {
		sum.JitterMethod = rr.JitterMethod
	}
	sum.NoteFirstByte(rr.FirstByteSeconds) // the test's first byte: its earliest stream's
	sum.Bytes += rr.Bytes
	sum.Packets += rr.Packets
	sum.Lost += rr.Lost
	sum.OutOfOrder += rr.OutOfOrder
	// A sum of duplicates is known only when every stream's count is.
	switch {
	case first && rr.Duplicates != nil:
		sum.Duplicates = result.Count(*rr.Duplicates)
	case sum.Duplicates != nil && rr.Duplicates != nil:
		*sum.Duplicates += *rr.Duplicates
	default:
		sum.Duplicates = nil
	}
	// Percentiles of separate streams do not add up: the sum carries a
	// transit summary only when it is one stream's (streams[] keep theirs).
	sum.Transit = nil
	if first && rr.Transit != nil {
		tr := *rr.Transit
		sum.Transit = &tr
	}
	sum.Total += rr.Total
	sum.JitterMS = max(sum.JitterMS, rr.JitterMS)
	sum.Seconds = max(sum.Seconds, rr.Seconds)
	if sum.Seconds > 0 {
		sum.BitsPerSecond = float64(sum.Bytes) * 8 / sum.Seconds
		sum.PacketsPerSecond = float64(sum.Packets) / sum.Seconds
	}
}

// JitterMethod names how a local receiver's jitter was measured.
func JitterMethod(gro bool) string {
	if gro {
		return result.JitterPerBatch
	}
	return result.JitterPerDatagram
}

// DroppedDatagrams says how many datagrams a socket's drop count of n
// stands for: n, or, with receive offload (gro), at least n, as the kernel
// counts a dropped coalesced packet once however many datagrams it held.
func DroppedDatagrams(n uint64, gro bool) string {
	if gro {
		return fmt.Sprintf("%s datagrams (%d packets, each of one or more datagrams coalesced by receive offload)", dropCount(int64(n), gro), n)
	}
	return dropCount(int64(n), gro) + " datagrams"
}

// dropCount is a socket's drop count n as a count of datagrams: "at least
// n" with receive offload (gro).
func dropCount(n int64, gro bool) string {
	if gro {
		return fmt.Sprintf("at least %d", n)
	}
	return fmt.Sprintf("%d", n)
}

// serverSendBuffer bounds the datagram copies one server-side UDP send
// holds (one per datagram of a batch): a header asking for 64 KiB
// datagrams must not cost 2 MiB per test.
const serverSendBuffer = 128 << 10

// ServerSendBatch is the send batch for length-byte datagrams: 32, fewer
// for long ones.
func ServerSendBatch(length int) int { return min(32, max(1, serverSendBuffer/max(length, 1))) }

// RateOf fills a sender's bit rate from its bytes and seconds.
func RateOf(s *result.Sender) {
	if s.Seconds > 0 {
		s.BitsPerSecond = float64(s.Bytes) * 8 / s.Seconds
		s.PacketsPerSecond = float64(s.Packets) / s.Seconds
	}
}
