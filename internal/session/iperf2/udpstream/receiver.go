package udpstream

import (
	"encoding/binary"
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/tickdiag"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// MaxReportResends bounds how often one finished test answers late FINs,
// so a flood of FINs cannot keep the server replying forever.
const MaxReportResends = 250

// Receiver is the receiving side of one iperf2 UDP test, fed datagram by
// datagram by whoever reads the socket (the server's demultiplexer, or a
// client's connect-back listener). It is owned by one goroutine.
type Receiver struct {
	// JitterMethod is how the socket times arrivals
	// (session.JitterMethod): per coalesced batch when it had UDP receive
	// offload on, and so is the jitter. The caller sets it.
	JitterMethod string

	peer   netip.AddrPort
	layout i2wire.Layout
	seq64  bool
	ext    i2wire.IDExtender // 32-bit ids (seq64 false) read across their wrap
	hdr    i2wire.ClientHeader
	hasHdr bool
	hdrErr error // why an announced client header could not be read

	rx        *stats.UDPReceiver
	start     time.Time // first datagram's arrival
	last      time.Time // latest datagram's arrival
	finAt     time.Time
	finID     int64
	lastSent  time.Time // the latest send stamp of its datagrams (the sender's clock): see Ended
	done      bool
	idleEnded bool
	report    []byte
	resends   int
	// reportAt is when the report was last sent; a FIN that arrived
	// before it was sent before the client could have had that report,
	// and is not answered again (see Feed).
	reportAt   time.Time
	unanswered int64 // late FINs not answered (resend limit reached, or no report)
	late       int64 // data datagrams after the FIN
	// held are copies of the late data datagrams, kept in case they were
	// the start of a new test from the same source (see OpensNewTest).
	held       []Held
	heldBytes  int
	short      int64 // datagrams too short to carry an id
	finHeader  []byte
	finLen     int // the FIN's length: the client's datagrams, which its buffer holds
	dropsAtEnd uint64
	// The data datagrams' own span (the FIN excluded), for the rate:
	// N datagrams arriving over first..last span N−1 gaps.
	dataN, dataBytes    int64
	firstLen            int
	firstData, lastData time.Time
	// arrivals are the receive times of the last arrivalWindow data
	// datagrams, relative to start, for the timer-tick diagnosis: a
	// test's memory does not grow with its length.
	arrivals *tickdiag.Window
	// diag is the diagnosis made at the FIN (diagDone), for the report's
	// wirebench extension and the server's own result.
	diag     string
	diagDone bool
}

// arrivalWindow is how many arrival times one test keeps (8 bytes each,
// 128 KiB): the last ones, enough for 8 ticks of a 1000 Hz timer up to
// 2 Mpps and of a 100 Hz one up to 200 kpps (docs/server.md).
const arrivalWindow = 16384

// NewReceiver starts a test from its first datagram b, which arrived at
// at from peer: its layout and client header (if it announces one) are
// this test's.
func NewReceiver(peer netip.AddrPort, b []byte, at time.Time) *Receiver {
	t := &Receiver{peer: peer, layout: i2wire.DetectUDPLayout(b), start: at, last: at}
	off := t.layout.HeaderLen()
	if announcesHeader(b, t.layout) {
		if h, _, err := i2wire.ParseClientHeader(b[off:]); err == nil {
			t.hdr, t.hasHdr = h, true
			t.seq64 = h.Flags&i2wire.FlagSeqNo64b != 0
		} else {
			t.hdrErr = err
		}
	}
	t.rx = stats.NewUDPReceiver(FirstID(t.layout))
	t.rx.KeepTransit = true // the report's wbx1 extension and result carry it
	t.arrivals = tickdiag.NewWindow(arrivalWindow)
	return t
}

// announcesHeader reports whether datagram b, in layout l, announces an
// iperf2 client header after its datagram header (its flags word says so).
func announcesHeader(b []byte, l i2wire.Layout) bool {
	off := l.HeaderLen()
	return len(b) >= off+4 && i2wire.ClientHeaderLen(binary.BigEndian.Uint32(b[off:]), true) > 0
}

// OpensNewTest reports whether datagram b, from the source of this finished
// test, is the start of a new test from that source (the kernel may give a
// new client the source port of the last one) rather than a late datagram
// of this one. It decides from the datagram's bytes alone, never from
// timing (README, "How the server tells tests and dialects apart"):
//
//   - its layout (i2wire.DetectUDPLayout: offsets 12 and 16) or whether it
//     announces a client header differs from this test's first datagram:
//     a new test;
//   - a FIN (negative id) belongs to this test: it is answered with the
//     report;
//   - a data id this test still counts as lost (between its first id and
//     its FIN, not received) is a late datagram of this test;
//   - a data id already received, with a send stamp not after the latest
//     this test carried, is a copy the network delivered late
//     (Ended.Repeats), held as a late datagram, unless it comes after
//     StreamOf-1 such datagrams held with lower ids: a stream of them is a
//     new test (its sender's clock restarted, or stamps every run alike);
//   - any other data id (one already received, or at or beyond the FIN) is
//     a sender that restarted its ids: a new test.
//
// A new test's first datagrams may carry ids this test lost: they are taken
// for late datagrams but held (up to maxHeldBytes), and when a later
// datagram opens the new test, the held ones with lower ids than it were
// the new test's start: the server feeds them to it first (TakeHeld).
func (t *Receiver) OpensNewTest(b []byte) bool {
	l := i2wire.DetectUDPLayout(b)
	if l != t.layout || announcesHeader(b, l) != (t.hasHdr || t.hdrErr != nil) {
		return true
	}
	id, ok := t.peekID(b)
	if !ok || i2wire.IsFIN(id) {
		return false
	}
	if t.rx.Seq.Missing(id) {
		return false
	}
	return !t.Ended().Repeats(b) || t.heldBelow(id) >= StreamOf-1
}

// peekID is the id of datagram b as Feed would read it (a 32-bit one
// extended past its wrap), without feeding it.
func (t *Receiver) peekID(b []byte) (int64, bool) {
	id, _, _, ok := i2wire.ParseDatagram(b, t.layout, t.seq64)
	if ok && !t.seq64 {
		ext := t.ext // a copy: peeking moves nothing
		id = t.extend(&ext, id, b)
	}
	return id, ok
}

// extend reads the 32-bit id of datagram b (seq64 false) past its wrap
// with e, helped by its upper id word in the modern layout, which iperf
// 2.1 writes even where no header says so (i2wire.IDExtender.ExtendUpper).
func (t *Receiver) extend(e *i2wire.IDExtender, id int64, b []byte) int64 {
	if t.layout == i2wire.LayoutModern {
		return e.ExtendUpper(id, binary.BigEndian.Uint32(b[12:]))
	}
	return e.Extend(id)
}

// Ahead reports whether data datagram b comes after ids not yet seen
// that follow the highest one seen: counting it now would make them, if
// they still arrive, late. A reader that takes a stream over from another
// socket waits on it for the datagrams still in flight there.
func (t *Receiver) Ahead(b []byte) bool {
	id, ok := t.peekID(b)
	if !ok || i2wire.IsFIN(id) || !t.rx.Seq.Started() {
		return false
	}
	return id > t.rx.Seq.Max()+1
}

// Held is a copy of a datagram and its arrival time.
type Held struct {
	B       []byte
	At      time.Time // the kernel's stamp (wall clock)
	Arrived time.Time // on the monotonic clock
}

// maxHeldBytes bounds the late datagrams one finished test holds. A new
// test's start needs only the few datagrams sent before one with an id the
// old test did not lose (about 44 of 1470 bytes fit); the bound matters
// because every finished test may hold it for finishedKeep: at the default
// --max-tests of 1024 that is at most 64 MiB, where 1 MiB each was 1 GiB.
const maxHeldBytes = 64 << 10

// TakeHeld returns the held late datagrams whose ids are below the id of
// opening, the datagram that opens a new test from this source, in arrival
// order, and stops counting them as late: they were the new test's start.
// Held ids at or above it stay late datagrams of this test.
func (t *Receiver) TakeHeld(opening []byte) []Held {
	held := t.held
	t.held, t.heldBytes = nil, 0
	if i2wire.DetectUDPLayout(opening) != t.layout {
		return nil // the new test's layout is not ours: nothing held is its
	}
	next, _, _, _ := i2wire.ParseDatagram(opening, t.layout, t.seq64)
	var start []Held
	for _, h := range held {
		if id, _, _, _ := i2wire.ParseDatagram(h.B, t.layout, t.seq64); id < next {
			start = append(start, h)
		}
	}
	t.late -= int64(len(start))
	return start
}

// NewReceiverAs starts a test whose layout is known in advance (a stream
// we asked for: -R, or a connect-back from a 2.1 server).
func NewReceiverAs(peer netip.AddrPort, layout i2wire.Layout, seq64 bool, at time.Time) *Receiver {
	t := &Receiver{peer: peer, layout: layout, seq64: seq64, start: at, last: at,
		rx: stats.NewUDPReceiver(FirstID(layout)), arrivals: tickdiag.NewWindow(arrivalWindow)}
	t.rx.KeepTransit = true
	return t
}

// Feed is FeedArrived with the stamp for the arrival: for a caller with no
// reading of the monotonic clock.
func (t *Receiver) Feed(b []byte, at time.Time) []byte { return t.FeedArrived(b, at, at) }

// FeedArrived accounts for one datagram and returns the reply to send, if
// any: the server report when the datagram is a FIN (or a late FIN that
// says the report was lost). Counters show it after the owner's next
// Publish. The datagram arrived at at, the kernel's stamp on the wall clock, which
// transit times and jitter compare with the sender's stamps, and at arrived
// on the monotonic clock (udpio.Message.ArrivedAt), which the test's
// durations, its rate and the arrivals of the tick diagnosis are read on:
// a step of the wall clock moves none of them.
func (t *Receiver) FeedArrived(b []byte, at, arrived time.Time) []byte {
	id, sec, usec, ok := i2wire.ParseDatagram(b, t.layout, t.seq64)
	if !ok {
		t.short++
		return nil
	}
	if !t.seq64 {
		id = t.extend(&t.ext, id, b) // past 2^31 a 32-bit id is data, not a FIN
	}
	if t.done {
		if i2wire.IsFIN(id) && t.report != nil && arrived.Before(t.reportAt) {
			// An iperf 2.1 client re-sends its FIN every 10 ms until a
			// report arrives. FINs that reached the socket before our
			// last report left were sent before the client could have
			// it: answering each again only adds sends to a reader that
			// is already behind, and pushes the answer to the FINs
			// still queued further back. A FIN that arrives after the
			// report was sent says it was lost, and is answered.
			return nil
		}
		if i2wire.IsFIN(id) && t.report != nil && t.resends < MaxReportResends {
			t.resends++
			return t.report
		}
		if i2wire.IsFIN(id) {
			t.unanswered++
		} else {
			t.late++
			if t.heldBytes+len(b) <= maxHeldBytes {
				t.held = append(t.held, Held{B: append([]byte(nil), b...), At: at, Arrived: arrived})
				t.heldBytes += len(b)
			}
		}
		return nil
	}
	if !t.rx.Seq.Started() {
		t.start = arrived
	}
	t.last = arrived
	var sent time.Time
	if sec != 0 || usec != 0 {
		sent = sentAt(sec, usec)
		if sent.After(t.lastSent) {
			t.lastSent = sent
		}
	}
	if i2wire.IsFIN(id) {
		// The FIN counts as datagram |id| (iperf's rule, §1.4).
		t.rx.Datagram(-id, len(b), at, sent)
		t.rx.Publish() // the counts are final
		t.finID, t.finAt, t.done = id, arrived, true
		hl := t.layout.HeaderLen()
		t.finHeader = append([]byte(nil), b[:min(hl, len(b))]...)
		t.finLen = len(b)
		t.report = t.buildReport()
		return t.report
	}
	if t.rx.Datagram(id, len(b), at, sent) == stats.Duplicate {
		return nil
	}
	if t.dataN == 0 {
		t.firstData, t.firstLen = arrived, len(b)
	}
	t.dataN++
	t.dataBytes += int64(len(b))
	t.lastData = arrived
	t.arrivals.Add(arrived.Sub(t.start))
	return nil
}

// ReportSent records that the report was sent (or queued to be sent in
// the same read) at now.
func (t *Receiver) ReportSent(now time.Time) { t.reportAt = now }

// Diagnose looks for a timer-bound arrival pattern (tickdiag) and returns
// the finding with its evidence, or "".
func (t *Receiver) Diagnose() string {
	if t.diagDone {
		return t.diag
	}
	t.diag = t.findTick()
	if t.done {
		// The arrivals are complete: one diagnosis serves the report and
		// the result, and a finished test kept for late FINs holds no
		// arrivals.
		t.diagDone = true
		t.arrivals = tickdiag.NewWindow(0)
	}
	return t.diag
}

// findTick runs the timer-tick diagnosis over the arrivals.
func (t *Receiver) findTick() string {
	d := tickdiag.Diagnose(t.arrivals.Ordered(), 0)
	if d == nil {
		return ""
	}
	over := ""
	if c := t.arrivals.Covers(); c != "" {
		over = " in " + c
	}
	return fmt.Sprintf("%s (evidence: %.0f frames/s, within %.2f %% of %.0f = %.0f × %.0f Hz; bursts of %.1f every %v; phase lock %.2f over %d bursts%s)",
		d.Message, d.FrameRate, 100*math.Abs(d.Offset), d.NearestMultiple, d.NearestMultiple/d.TickHz, d.TickHz,
		d.FramesPerTick, d.Period.Round(time.Microsecond), d.PhaseLock, d.Bursts, over)
}

// EndIdle ends a test whose client stopped sending without a FIN (ESP-IDF).
func (t *Receiver) EndIdle() {
	if t.done {
		return
	}
	t.done, t.idleEnded = true, true
	t.finAt = t.last
	t.rx.Publish()
}

// duration is the receive period: first arrival to the FIN (or, for a test
// that ended idle, to the last datagram).
func (t *Receiver) duration() time.Duration { return t.finAt.Sub(t.start) }

func (t *Receiver) buildReport() []byte {
	s := t.rx.Seq
	r := i2wire.ServerReport{
		TotalBytes: uint64(t.rx.Bytes()),
		Stop:       t.duration(),
		Errors:     uint64(s.Lost()),
		OutOfOrder: uint64(s.OutOfOrder()),
		Datagrams:  uint64(max(s.Max(), 0)),
		Jitter:     t.rx.Jitter.Value(),
	}
	if t.layout == i2wire.LayoutLegacy {
		return r.AppendLegacy(nil, t.finHeader)
	}
	if secs := r.Stop.Seconds(); secs > 0 {
		r.Transit.IPGCount = int32(float64(r.Datagrams) / secs)
		r.Transit.IPGSum = 1
	}
	// What the iperf 2 report has no field for goes after it, where iperf
	// 2 clients do not look (i2wire.WBExtension), within the length of the
	// client's own datagrams: an older client may read the reply into its
	// send buffer, which holds no more.
	e := i2wire.WBExtension{Duplicates: uint64(s.Duplicates()), HasDuplicates: true, Diagnosis: t.Diagnose()}
	if tr := t.transit(); tr != nil {
		e.Latency = i2wire.WBLatency{MinUS: tr.Min, P50US: tr.P50, P90US: tr.P90, P99US: tr.P99, P999US: tr.P999,
			MaxUS: tr.Max, Count: uint64(tr.Count)}
		e.HasLatency = true
	}
	return i2wire.AppendWBExtension(r.AppendModern(nil, nil), e, t.finLen)
}

// transit summarises the one-way transit times so far; nil when no
// datagram carried a sender timestamp.
func (t *Receiver) transit() *result.Transit {
	tr := &t.rx.Transit
	if tr.Count() == 0 {
		return nil
	}
	return &result.Transit{Min: tr.Min(), P50: tr.Percentile(50), P90: tr.Percentile(90), P99: tr.Percentile(99),
		P999: tr.Percentile(99.9), Max: tr.Max(), Count: tr.Count()}
}

// Summary returns the receiver summary of the test so far.
func (t *Receiver) Summary() *result.Receiver {
	s := t.rx.Seq
	secs := t.duration().Seconds()
	if !t.done {
		secs = t.last.Sub(t.start).Seconds()
	}
	r := &result.Receiver{
		Bytes: t.rx.Bytes(), Packets: s.Received(), Lost: s.Lost(), OutOfOrder: s.OutOfOrder(),
		Duplicates: result.Count(s.Duplicates()), JitterMS: float64(t.rx.Jitter.Value()) / 1e6, Seconds: secs,
		Total: max(s.Max(), 0), Source: "local", JitterMethod: t.JitterMethod, Transit: t.transit(),
	}
	// The rate is the data datagrams' own: after the first, over the
	// span from the first to the last. Bytes over the whole duration would
	// add the FIN, sent at the end rather than in a paced slot, and count
	// N datagrams against N−1 gaps: at 8.5 datagrams/s for 1 s that reads
	// 117 kbit/s for 100 kbit/s offered.
	if span := t.lastData.Sub(t.firstData).Seconds(); t.dataN >= 2 && span > 0 {
		r.BitsPerSecond = float64(t.dataBytes-int64(t.firstLen)) * 8 / span
		r.PacketsPerSecond = float64(t.dataN-1) / span
	} else if secs > 0 {
		r.BitsPerSecond = float64(r.Bytes) * 8 / secs
		r.PacketsPerSecond = float64(r.Packets) / secs
	}
	return r
}

// Warnings says what makes this test's figures doubtful.
func (t *Receiver) Warnings() []string {
	var w []string
	if t.idleEnded {
		w = append(w, "the sender never sent a FIN (an ESP-IDF-style client?): the test ended after its idle timeout and the duration runs to the last datagram received")
	}
	if z := t.rx.Jitter.ZeroStamps(); z > 0 {
		w = append(w, fmt.Sprintf("%d datagrams carried no sender timestamp: jitter is computed from the others only (0 if none had one)", z))
	}
	if t.short > 0 {
		w = append(w, fmt.Sprintf("%d datagrams were too short to carry a sequence number and were not counted", t.short))
	}
	if n := t.rx.Seq.TooOld(); n > 0 {
		w = append(w, fmt.Sprintf("%d datagrams arrived more than %d ids late: they were counted as out of order without checking for duplicates", n, stats.Window))
	}
	if t.late > 0 {
		w = append(w, fmt.Sprintf("%d data datagrams arrived after the FIN and were not counted", t.late))
	}
	return w
}
