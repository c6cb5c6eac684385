// Package reflectrun runs paced datagrams to a UDP reflector (a
// `wirebench reflect`, a device in loopback) and counts what comes back,
// with the round-trip time of each: the runner of sweep's reflect trials.
// Its datagrams are stamped as iperf 2.1's (internal/wire/iperf2), so a
// reflector's data counts apply to them too; it speaks no test protocol.
package reflectrun

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/tickdiag"
	"github.com/wirebench/wirebench/internal/udpio"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// Config is one paced run of datagrams to a UDP reflector (a
// `wirebench reflect`, a device in loopback): what goes out, and how long
// to wait for what comes back.
type Config struct {
	Host string
	Port int
	// Length is the UDP payload of every datagram (at least 16 bytes: the
	// iperf2 datagram header, id and send time, that comes back with it).
	Length int
	// PPS is the rate in datagrams per second (> 0).
	PPS float64
	// Duration or Packets bounds the run (one of them > 0).
	Duration time.Duration
	Packets  int64
	// Drain is the longest to keep listening after the last datagram went
	// out for ones still on their way back (default 500 ms). Listening
	// ends earlier once every datagram sent came back, or once none came
	// back for longer than any pause of theirs suggests (see Quiet): the
	// far end's queues have emptied, and what did not come back by then
	// was lost.
	Drain time.Duration
}

// QuietMin is the shortest silence after which a run stops listening
// for late answers: longer than a reflector on a busy host is kept off
// its CPU (tens of milliseconds), so a pause in its answers is not taken
// for their end.
const QuietMin = 100 * time.Millisecond

// Quiet is how long a run waits, once sending ended, after the last
// answer (or the last send) for another, given the slowest round trip and
// the longest pause between two answers so far: four times that round
// trip (answers come back in the order sent, so the last one due comes at
// most that queue's delay after the one before) and twice that pause (a
// reflector on a busy host that paused once may pause again), from
// QuietMin up to drain; drain itself while nothing came back (there is no
// round trip to go by).
func Quiet(slowest, pause, drain time.Duration) time.Duration {
	if slowest <= 0 {
		return drain
	}
	return min(max(4*slowest, 2*pause, QuietMin), drain)
}

// Result is what a reflect run sent and what came back.
type Result struct {
	Sent       int64
	SendErrors int64
	// OfferedPPS is the rate the sender really offered (datagrams after the
	// first over the time from the first send to the last).
	OfferedPPS float64
	// SendSeconds spans the first send to the last; MaxLag is the furthest
	// the sender fell behind its schedule.
	SendSeconds float64
	MaxLag      time.Duration
	// Stalls are the deepest lags of the episodes in which the sender fell
	// behind and caught up in a burst (engine.UDPSendResult.Stalls);
	// StallsCut says there were more than the list holds.
	Stalls    []time.Duration
	StallsCut bool
	// Received counts distinct datagrams of this run that came back;
	// Duplicates the extra copies; Stray datagrams that were not ours.
	// Ids are told apart in a window of the latest stats.Window ids (a
	// run's memory does not grow with its length): TooOld counts those
	// that came back further behind, counted as received unchecked.
	Received, Duplicates, Stray, TooOld int64
	// ReceiveSeconds spans the first datagram back to the last.
	ReceiveSeconds float64
	// Listened is how long the run listened after its last send, and
	// ListenEnd why it stopped: ListenAllBack, ListenQuiet or ListenDrain.
	Listened  time.Duration
	ListenEnd string
	// RTT is the distribution of the round-trip times (kernel receive
	// time minus the send time carried) of every datagram that came back:
	// count, minimum, mean and maximum exact, percentiles from a histogram
	// to within 0.1 % (stats.RTTRecorder).
	RTT result.RTTSummary
	// RTTs are the round-trip times of a uniform sample of the datagrams
	// that came back, in arrival order: every SampleStep-th (1 for a run
	// of up to SampleSize); Arrivals their kernel receive times, since the
	// first datagram back.
	RTTs, Arrivals []time.Duration
	SampleStep     int64
	// TickArrivals are the kernel receive times, since the first, of the
	// last TickWindow datagrams back, consecutive, for the timer-tick
	// diagnosis; TickCovers says which ("" when they are all).
	TickArrivals []time.Duration
	TickCovers   string
	// HostDrops counts datagrams our own socket dropped (its receive buffer
	// was full): they came back but were lost here; -1 when unknown.
	HostDrops int64
}

// Why a run stopped listening after its last send (Result.ListenEnd).
const (
	ListenAllBack = "all_back" // every datagram sent came back
	ListenQuiet   = "quiet"    // none came back for Quiet(slowest round trip, longest pause)
	ListenDrain   = "drain"    // Config.Drain passed
)

// Lost is what did not come back.
func (r *Result) Lost() int64 { return max(r.Sent-r.Received, 0) }

// The bounds of a run's memory, whatever its length: the sample of round
// trips (2 × 8 bytes a datagram, 2 MiB) and the window of consecutive
// arrivals for the tick diagnosis (8 bytes each, 512 KiB), beside the
// histogram (about 220 KiB) and the id window (8 KiB).
const (
	SampleSize = 1 << 17
	TickWindow = 1 << 16
)

// reflectLayout stamps each datagram as an iperf2 2.1 datagram (id from 1
// and the send time), so a reflector's data counts apply to it too.
const reflectLayout = i2wire.LayoutModern

// Run sends cfg's datagrams to a reflector and counts what comes
// back, with the round-trip time of each. An error means the run could not
// start or sending could not go on; the result then holds what was done.
func Run(ctx context.Context, cfg Config) (Result, error) {
	var res Result
	cfg, err := checkConfig(cfg)
	if err != nil {
		return res, err
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	conn, err := udpio.Dial(ctx, "udp", addr, "", session.UDPClientOptions())
	if err != nil {
		return res, fmt.Errorf("reflect: opening udp socket to %s: %w", addr, err)
	}
	defer conn.Close()
	drops0, dropsKnown := conn.Drops()

	rx := newReturns(&res, cfg.Length)
	recvCtx, stopRecv := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRecv()
	recvDone := make(chan error, 1)
	go func() { recvDone <- engine.ReceiveUDP(recvCtx, conn, engine.UDPReceiveConfig{}, rx.take) }()

	send, sendErr := sendAll(ctx, conn, cfg, rx.first)
	res.Sent, res.SendErrors, res.MaxLag = send.Packets, send.Errors, send.MaxLag
	res.Stalls, res.StallsCut = send.Stalls, send.StallsCut
	res.OfferedPPS = send.OfferedRate()
	if send.Last.After(send.First) {
		res.SendSeconds = send.Last.Sub(send.First).Seconds()
	}
	sentAt := time.Now()
	res.ListenEnd = ListenAllBack
	if !rx.sent(send.NextID-1, send.Packets) {
		res.ListenEnd = waitLate(recvDone, rx, sentAt, cfg.Drain)
	}
	res.Listened = time.Since(sentAt)
	stopRecv()
	recvErr := <-recvDone
	rx.finish()
	res.HostDrops = -1
	if d, ok := conn.Drops(); ok && dropsKnown {
		res.HostDrops = int64(d - drops0)
	}
	if sendErr != nil {
		return res, fmt.Errorf("reflect: %w", sendErr)
	}
	if recvErr != nil {
		return res, fmt.Errorf("reflect: receiving: %w", recvErr)
	}
	return res, nil
}

// waitLate waits, after the last send at sentAt, for answers still on
// their way back: until every one came back (ReceiveUDP then ends, and
// its result goes back into done), none came for Quiet, or drain passed.
// It says which (Result.ListenEnd).
func waitLate(done chan error, rx *returns, sentAt time.Time, drain time.Duration) string {
	end := sentAt.Add(drain)
	t := time.NewTimer(drain)
	defer t.Stop()
	for {
		last, slowest, pause := rx.lastAnswer(sentAt)
		next, why := last.Add(Quiet(slowest, pause, drain)), ListenQuiet
		if !next.Before(end) {
			next, why = end, ListenDrain
		}
		if !time.Now().Before(next) {
			return why
		}
		t.Reset(time.Until(next))
		select {
		case <-t.C:
		case err := <-done:
			done <- err
			return ListenAllBack
		}
	}
}

// checkConfig checks cfg and fills its default drain.
func checkConfig(cfg Config) (Config, error) {
	if cfg.Length < reflectLayout.HeaderLen() || cfg.Length > 65507 {
		return cfg, session.ConfigError{Err: fmt.Errorf("reflect: datagram length %d: want %d to 65507 bytes", cfg.Length, reflectLayout.HeaderLen())}
	}
	if !(cfg.PPS > 0) || (cfg.Duration <= 0 && cfg.Packets <= 0) {
		return cfg, session.ConfigError{Err: errors.New("reflect: a positive rate and a duration or a packet count are needed")}
	}
	if cfg.Drain <= 0 {
		cfg.Drain = 500 * time.Millisecond
	}
	return cfg, nil
}

// sendAll sends cfg's paced datagrams on conn, numbered from first.
func sendAll(ctx context.Context, conn udpio.Conn, cfg Config, first int64) (engine.UDPSendResult, error) {
	tmpl := make([]byte, cfg.Length)
	session.FillPattern(tmpl)
	clear(tmpl[:min(len(tmpl), 36)])
	bytes := int64(0)
	if cfg.Packets > 0 {
		bytes = cfg.Packets * int64(cfg.Length)
	}
	return engine.SendUDP(ctx, conn, engine.UDPSendConfig{
		Template: tmpl,
		Stamp:    func(b []byte, id int64, now time.Time) { i2wire.PutDatagram(b, reflectLayout, id, now) },
		PPS:      cfg.PPS, Duration: cfg.Duration, Bytes: bytes, FirstID: first,
	}, new(stats.Counters))
}

// returns counts the datagrams that come back, on the receiving
// goroutine, into res's receive fields.
type returns struct {
	res    *Result
	length int
	first  int64 // the first id sent

	mu      sync.Mutex
	seq     *stats.SeqTracker
	rtt     *stats.RTTRecorder
	sample  *stats.Thinned
	ticks   *tickdiag.Window
	sentTo  int64 // highest id sent, once sending ended; -1 while sending
	firstRx time.Time
	lastRx  time.Time
	// pause is the longest time between two answers (kernel receive
	// times: a clock step can only make it longer, and the wait it sets
	// is bounded by the drain); lastAt when the latest answer came, on the
	// monotonic clock, once sending ended.
	pause  time.Duration
	lastAt time.Time
}

// newReturns counts what comes back into res, for datagrams of length bytes.
func newReturns(res *Result, length int) *returns {
	first := reflectLayout.FirstID()
	return &returns{res: res, length: length, first: first, seq: stats.NewSeqTracker(first), rtt: stats.NewRTTRecorder(),
		sample: stats.NewThinned(SampleSize), ticks: tickdiag.NewWindow(TickWindow), sentTo: -1}
}

// take counts one datagram that came back; it returns false once
// everything sent came back (stop listening).
func (rx *returns) take(m *udpio.Message) bool {
	id, sec, usec, ok := i2wire.ParseDatagram(m.Buf[:m.N], reflectLayout, false)
	rx.mu.Lock()
	defer rx.mu.Unlock()
	res := rx.res
	if !ok || id < rx.first || m.N != rx.length {
		res.Stray++
		return true
	}
	if rx.seq.Add(id) == stats.Duplicate {
		res.Duplicates++
		return true
	}
	if rx.firstRx.IsZero() {
		rx.firstRx = m.Time
	} else {
		rx.pause = max(rx.pause, m.Time.Sub(rx.lastRx))
	}
	rx.lastRx = m.Time
	rtt, at := m.Time.Sub(time.Unix(int64(sec), int64(usec)*1000)), m.Time.Sub(rx.firstRx)
	rx.rtt.Record(rtt)
	if rx.sentTo >= 0 {
		rx.lastAt = time.Now()
	}
	rx.sample.Add(rtt, at)
	rx.ticks.Add(at)
	// Everything came back: stop listening.
	return rx.sentTo < 0 || rx.seq.Received() < rx.sentTo-rx.first+1
}

// sent notes that sending ended at id last, after packets datagrams, and
// says whether all of them came back already.
func (rx *returns) sent(last, packets int64) (all bool) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	rx.sentTo = last
	return rx.seq.Received() >= packets
}

// lastAnswer is when the latest answer came back after sending ended
// (sentAt if none did yet), the slowest round trip and the longest pause
// between answers so far.
func (rx *returns) lastAnswer(sentAt time.Time) (time.Time, time.Duration, time.Duration) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	if rx.lastAt.After(sentAt) {
		return rx.lastAt, rx.rtt.Max(), rx.pause
	}
	return sentAt, rx.rtt.Max(), rx.pause
}

// finish puts the counts into res, once receiving ended.
func (rx *returns) finish() {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	res := rx.res
	res.Received, res.TooOld = rx.seq.Received(), rx.seq.TooOld()
	if rx.lastRx.After(rx.firstRx) {
		res.ReceiveSeconds = rx.lastRx.Sub(rx.firstRx).Seconds()
	}
	res.RTT = rx.rtt.Summary()
	res.RTTs, res.Arrivals = slices.Clone(rx.sample.Values()), slices.Clone(rx.sample.Times())
	res.SampleStep = rx.sample.Step()
	res.TickArrivals, res.TickCovers = rx.ticks.Arrivals(), rx.ticks.Covers()
}
