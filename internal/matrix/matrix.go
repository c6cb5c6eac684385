// Package matrix runs the direction × protocol table a device's bench is
// usually summed up in — TCP and UDP, upload (we send) and download (the
// peer sends) — as a loop of client sessions, and turns their results into
// one table of cells. It never opens
// a socket itself: every test goes through a Session, so the loop is tested
// with a fake one.
package matrix

import (
	"context"
	"errors"
	"fmt"
	"github.com/wirebench/wirebench/internal/units"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf3"
	"github.com/wirebench/wirebench/internal/version"
)

// Cell statuses (result.MatrixCell.Status).
const (
	StatusOK          = "ok"
	StatusUnsupported = "unsupported" // the peer's dialect cannot do this cell
	StatusFailed      = "failed"      // the test was tried and did not give a figure
	// StatusSuspect: the figure is more than 0.1 % above what the medium
	// allows (linerate.SuspectAbovePercent); Reason says so in words.
	StatusSuspect = linerate.StatusSuspect
)

// Config is one matrix run.
type Config struct {
	// Base is the client test every cell starts from: host, port, dialect,
	// duration, UDP rate, length, streams. Its direction fields (Reverse,
	// Tradeoff, Dual, FullDuplex, Bidir) and UDP are set per cell.
	Base session.ClientConfig
	// Protocols lists the protocols to run, in order (default TCP, UDP).
	Protocols []string
	// Bidir adds a row per protocol where both directions run at once.
	Bidir bool
	// Place, when set, returns the receiver goodput's share of the
	// medium's line rate in percent for a cell's test (and fills the
	// result's own Link); ok false when it cannot be placed.
	Place func(r *result.Result, goodputBPS float64) (percent float64, ok bool)
	// Pause is the time left between one test and the next, for a peer
	// to wind down the last: iperf 2.1.8's UDP server, asked for the next
	// test at once, sometimes loses it (no report, or nothing sent back).
	Pause time.Duration
	// OnStart, when set, is called once before the first cell with how
	// long each test that will run is asked to last, in order (a row of
	// both directions at once is one test; a download asked with -r runs
	// the upload first and then the download, so it lasts twice as long).
	OnStart func(each []time.Duration)
	// OnCell, when set, is called before each cell runs (n counts from 1).
	OnCell func(n, total int, c result.MatrixCell)
	// OnInterval, when set, receives the intervals of the running cell.
	OnInterval func(c result.MatrixCell, in result.Interval)
	// PeerClient says the Session makes the peer send by itself (a device
	// driven through its own shell, --dut): download cells run in every
	// dialect, with Reverse set in their config for the Session to read,
	// and Method "device client"; --bidir rows are not offered.
	PeerClient bool
	// PeerAnswered says the peer answered a probe just before the matrix:
	// a first cell it refuses is tried again as later ones are (an iperf3
	// server reopens its listening socket after each test, the probe's
	// too).
	PeerAnswered bool
}

// Session runs one client test, with its latency probe when the session
// was set up for one.
type Session interface {
	Run(ctx context.Context, cfg session.ClientConfig) (*result.Result, *result.UnderLoad, error)
}

// plan is one test of the matrix and the cells it fills.
type plan struct {
	cfg   session.ClientConfig
	cells []result.MatrixCell
}

// DefaultPause is the Pause the matrix command uses.
const DefaultPause = time.Second

// Plan lists the cells cfg asks for, in the order they run, with the
// unsupported ones already marked.
func Plan(cfg Config) []result.MatrixCell {
	var cells []result.MatrixCell
	for _, p := range plans(cfg) {
		cells = append(cells, p.cells...)
	}
	sortCells(cells)
	return cells
}

func plans(cfg Config) []plan {
	protos := cfg.Protocols
	if len(protos) == 0 {
		protos = []string{result.TCP, result.UDP}
	}
	var out []plan
	for _, proto := range protos {
		base := cfg.Base
		base.UDP = proto == result.UDP
		base.Reverse, base.Tradeoff, base.Dual, base.FullDuplex, base.Bidir = false, false, false, false, false
		down := base
		c := result.MatrixCell{Protocol: proto, Direction: result.MatrixDownload}
		switch {
		case cfg.PeerClient:
			down.Reverse, c.Method = true, "device client"
		default:
			c = planDownload(base, &down)
		}
		// The download runs first: iperf 2.1.8's UDP server never sends on
		// a -R test that follows a forward UDP test (seen on loopback with
		// iperf's own client too), while the other order works. The cells
		// are listed upload first all the same (see Run).
		out = append(out, plan{cfg: down, cells: []result.MatrixCell{c}})
		up := result.MatrixCell{Protocol: proto, Direction: result.MatrixUpload, Method: "client sends"}
		if cfg.PeerClient {
			up.Method = "device server"
		}
		out = append(out, plan{cfg: base, cells: []result.MatrixCell{up}})
		if !cfg.Bidir || cfg.PeerClient {
			continue
		}
		out = append(out, bidirPlan(base, proto))
	}
	return out
}

// planDownload sets down to ask the peer to send, as its dialect allows,
// and returns the download cell (marked unsupported where it cannot).
func planDownload(base session.ClientConfig, down *session.ClientConfig) result.MatrixCell {
	c := result.MatrixCell{Protocol: protoOf(base), Direction: result.MatrixDownload}
	d, _ := dialect.Lookup(base.Dialect)
	c.Method = d.Download
	if !ask(down, d.Download) {
		c.Status, c.Reason = StatusUnsupported, "the raw dialect (zperf, ESP-IDF) carries no test header, so the peer cannot be asked to send: run the device's own client against `wirebench server` for this cell, or drive its shell with --dut"
	}
	return c
}

// ask sets cfg to ask the peer to send as method (a dialect.Ask… flag)
// says; false when method is "" (the dialect has no way to ask).
func ask(cfg *session.ClientConfig, method string) bool {
	switch method {
	case dialect.AskReverse:
		cfg.Reverse = true
	case dialect.AskTradeoff:
		cfg.Tradeoff = true
	case dialect.AskDual:
		cfg.Dual = true
	case dialect.AskFullDuplex:
		cfg.FullDuplex = true
	case dialect.AskBidir:
		cfg.Bidir = true
	default:
		return false
	}
	return true
}

func protoOf(c session.ClientConfig) string {
	if c.UDP {
		return result.UDP
	}
	return result.TCP
}

// bidirPlan is the row of a protocol where both directions run at once.
func bidirPlan(base session.ClientConfig, proto string) plan {
	both := base
	up := result.MatrixCell{Protocol: proto, Direction: result.MatrixUpload, Simultaneous: true}
	dn := result.MatrixCell{Protocol: proto, Direction: result.MatrixDownload, Simultaneous: true}
	d, _ := dialect.Lookup(base.Dialect)
	up.Method = d.BidirTCP
	if base.UDP {
		up.Method = d.BidirUDP
	}
	if !ask(&both, up.Method) {
		up.Status, up.Reason = StatusUnsupported, "the raw dialect carries no test header, so the peer cannot be asked to send back"
		dn.Status, dn.Reason = up.Status, up.Reason
	}
	dn.Method = up.Method
	return plan{cfg: both, cells: []result.MatrixCell{up, dn}}
}

func dialectOf(c session.ClientConfig) string {
	if c.Dialect == "" {
		return dialect.Default
	}
	return c.Dialect
}

// Run runs the matrix: each planned test through s, one after another.
// Its result is what a results store saves of a matrix run.
// A cell that fails does not stop the others; when ctx ends, the running
// cell ends the proper way and the cells not yet run are marked failed.
// The error is non-nil only when no cell could run at all because the
// config is wrong.
func Run(ctx context.Context, s Session, cfg Config) (*result.Matrix, error) {
	if _, err := dialect.Prepare(PrepCheck(cfg.Base)); err != nil {
		return nil, err
	}
	m := &result.Matrix{Schema: result.Schema, Kind: result.KindMatrix, Version: version.String(), StartedAt: time.Now().UTC(),
		Host: cfg.Base.Host, Port: cfg.Base.Port, Dialect: dialectOf(cfg.Base), Duration: cfg.Base.Duration.Seconds(),
		Cells: []result.MatrixCell{}, Warnings: []string{}}
	if cfg.Base.Rate.PPS {
		m.RatePPS = cfg.Base.Rate.Value
	} else {
		m.RateBPS = cfg.Base.Rate.Value
	}
	ps := plans(cfg)
	total := 0
	var each []time.Duration
	for _, p := range ps {
		total += len(p.cells)
		if p.cells[0].Status != StatusUnsupported {
			each = append(each, nominal(p.cfg))
		}
	}
	if cfg.OnStart != nil {
		cfg.OnStart(each)
	}
	n := 0
	answered := cfg.PeerAnswered // the peer ran a test of this matrix, or answered its probe
	ran := false                 // a test of this matrix ran (pause before the next)
	for _, p := range ps {
		if p.cells[0].Status == StatusUnsupported {
			for _, c := range p.cells {
				n++
				if cfg.OnCell != nil {
					cfg.OnCell(n, total, c)
				}
				m.Cells = append(m.Cells, c)
			}
			continue
		}
		n++
		if cfg.OnCell != nil {
			cfg.OnCell(n, total, p.cells[0])
		}
		if ctx.Err() != nil {
			for _, c := range p.cells {
				c.Status, c.Reason = StatusFailed, "not run: the matrix was stopped"
				m.Cells = append(m.Cells, c)
			}
			m.Error = "stopped before every cell ran"
			n += len(p.cells) - 1
			continue
		}
		if ran && cfg.Pause > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(cfg.Pause):
			}
		}
		ran = true
		tc := p.cfg
		if cfg.OnInterval != nil {
			cell := p.cells[0]
			tc.OnInterval = func(in result.Interval) { cfg.OnInterval(cell, in) }
		}
		r, lat, err := runRetryBusy(ctx, s, tc, answered)
		answered = answered || err == nil
		r = result.Sanitize(r) // JSON-safe: no NaN or Inf
		for i, c := range p.cells {
			if i > 0 {
				n++
			}
			c.Result, c.Latency = r, lat
			own := ownWarnings(r, c.Direction, i == 0)
			own = append(own, fill(&c, r, err, cfg.Place, own, i == 0)...)
			m.Cells = append(m.Cells, c)
			for _, w := range own {
				m.Warnings = append(m.Warnings, c.Name()+": "+w)
			}
			if c.Status == StatusFailed && !quotesWarning(c.Reason, own) {
				m.Warnings = append(m.Warnings, c.Name()+": failed: "+c.Reason)
			}
		}
	}
	sortCells(m.Cells)
	hintOnce(m)
	return m, nil
}

// nominal is how long a test of c is asked to last: its duration, twice
// over for -r (the two directions one after the other).
func nominal(c session.ClientConfig) time.Duration {
	if c.Tradeoff {
		return 2 * c.Duration
	}
	return c.Duration
}

// hintOnce takes the dialect hint (session.Iperf3Hint) out of the cells'
// reasons and warnings that carry it and says it once, naming the cells:
// a peer of the wrong dialect fails every cell the same way.
func hintOnce(m *result.Matrix) {
	cut := func(s string) (string, bool) {
		if !strings.Contains(s, session.Iperf3Hint) {
			return s, false
		}
		return strings.Replace(s, ": "+session.Iperf3Hint, "", 1), true
	}
	var names []string
	for i := range m.Cells {
		var hit bool
		if m.Cells[i].Reason, hit = cut(m.Cells[i].Reason); hit {
			names = append(names, m.Cells[i].Name())
		}
	}
	for i := range m.Warnings {
		m.Warnings[i], _ = cut(m.Warnings[i])
	}
	if len(names) == 0 {
		return
	}
	m.Warnings = append(m.Warnings, fmt.Sprintf("the peer ended the test at once in %s (%s): %s",
		units.Plural(len(names), "cell"), strings.Join(names, ", "), session.Iperf3Hint))
}

// sortCells orders cells as the table reads: by protocol as run, the
// one-way row before the bidir row, upload before download.
func sortCells(cells []result.MatrixCell) {
	rank := map[string]int{}
	for _, c := range cells {
		if _, ok := rank[c.Protocol]; !ok {
			rank[c.Protocol] = len(rank)
		}
	}
	key := func(c result.MatrixCell) int {
		k := rank[c.Protocol] * 4
		if c.Simultaneous {
			k += 2
		}
		if c.Direction == result.MatrixDownload {
			k++
		}
		return k
	}
	sort.SliceStable(cells, func(i, j int) bool { return key(cells[i]) < key(cells[j]) })
}

// busyRetries and busyPause bound the wait for a peer that still winds
// down the previous cell's test: an iperf3 server refuses the next test
// with ACCESS_DENIED, or resets connections while it reopens its listening
// socket, for a moment after a test ends.
const (
	busyRetries = 10
	busyPause   = 500 * time.Millisecond
)

// runRetryBusy runs one test, trying again while the peer says it is busy,
// resets the connection (something listens there), or — when it answered
// an earlier cell (answered) — refuses it. A refused test measured nothing.
func runRetryBusy(ctx context.Context, s Session, cfg session.ClientConfig, answered bool) (*result.Result, *result.UnderLoad, error) {
	for i := 0; ; i++ {
		r, lat, err := s.Run(ctx, cfg)
		busy := errors.Is(err, iperf3.ErrBusy) || errors.Is(err, syscall.ECONNRESET) ||
			answered && errors.Is(err, syscall.ECONNREFUSED)
		if !busy || i == busyRetries {
			return r, lat, err
		}
		select {
		case <-ctx.Done():
			return r, lat, err
		case <-time.After(busyPause):
		}
	}
}

// quotesWarning says the reason already quotes one of the cell's warnings
// (which the matrix's warnings carry anyway).
func quotesWarning(reason string, warnings []string) bool {
	for _, w := range warnings {
		if strings.Contains(reason, w) {
			return true
		}
	}
	return false
}

// PrepCheck is the base config as an upload test, for checking it before
// anything runs.
func PrepCheck(c session.ClientConfig) session.ClientConfig {
	c.Reverse, c.Tradeoff, c.Dual, c.FullDuplex, c.Bidir = false, false, false, false, false
	return c
}

// fill takes a cell's figures from its test's result, given the warnings
// true of them (own) and whether the cell is its test's first (the one r's
// own placement belongs to). It returns the placement's warnings about the
// cell's figures.
func fill(c *result.MatrixCell, r *result.Result, err error, place func(*result.Result, float64) (float64, bool), own []string, first bool) []string {
	if r != nil {
		c.Device = r.Device
	}
	if err != nil {
		c.Status, c.Reason = StatusFailed, err.Error()
		return nil
	}
	if r == nil {
		c.Status, c.Reason = StatusFailed, "no result"
		return nil
	}
	rcv, snd := flowOf(r, c.Direction)
	switch {
	case rcv != nil && (rcv.Bytes > 0 || rcv.Packets > 0):
		c.Basis = "receiver"
		c.BitsPerSecond = ptr(rcv.BitsPerSecond)
		if c.Protocol == result.UDP {
			c.JitterMS = ptr(rcv.JitterMS)
			if total := rcv.Packets + max(rcv.Lost, 0); total > 0 {
				c.LossPercent = ptr(100 * float64(rcv.Lost) / float64(total))
			} else {
				c.LossPercent = ptr(0)
			}
		}
	case snd != nil && snd.Bytes > 0:
		// iperf 2 servers do not report what a TCP test received: the
		// sender's acknowledged bytes are the best figure there is.
		c.Basis = "sender"
		c.BitsPerSecond = ptr(snd.BitsPerSecond)
		if c.Protocol == result.UDP {
			c.Reason = "the peer reported no receiver counts: the figure is what was sent, loss and jitter are unknown"
		} else {
			c.Reason = "the peer does not report what it received: the figure is what the sender sent"
			if snd.Basis == result.BasisAcknowledged {
				c.Reason += " and the peer acknowledged"
			}
		}
	default:
		c.Status = StatusFailed
		c.Reason = "no traffic was counted in this direction"
		if r.Error != "" {
			c.Reason += ": " + r.Error
		} else if len(own) > 0 {
			c.Reason += ": " + own[0]
		}
		return nil
	}
	c.Status = StatusOK
	if r.Error != "" {
		c.Status, c.Reason = StatusFailed, "the test ended early: "+r.Error
	}
	if place == nil || c.BitsPerSecond == nil {
		return nil
	}
	on := r
	if !first || fromReverse(r, c.Direction) {
		on = flowView(r, c.Direction, rcv, snd)
	}
	before := len(on.Warnings)
	if pct, ok := place(on, *c.BitsPerSecond); ok {
		c.PercentOfLine = ptr(pct)
		if why := linerate.AboveMedium(c.Basis+" goodput", pct, mediumOf(on)); why != "" && c.Status == StatusOK {
			c.Status = StatusSuspect
			c.Reason = joinReason(why, c.Reason)
		}
	}
	return append([]string(nil), on.Warnings[before:]...)
}

// mediumOf names the medium r was placed on ("the medium" when unknown).
func mediumOf(r *result.Result) string {
	if r.Link != nil && r.Link.Medium != "" {
		return r.Link.Medium
	}
	return "the medium"
}

// joinReason puts a new reason before an earlier one.
func joinReason(first, then string) string {
	if then == "" {
		return first
	}
	return first + "; " + then
}

// flowOf returns the receiver and sender figures of the cell's direction:
// the main flow, or the reverse flow of a two-flow test.
func flowOf(r *result.Result, dir string) (*result.Receiver, *result.Sender) {
	if r.Test.Mode == "full-duplex" {
		// One connection both ways: Sender is what we sent, Receiver
		// what we received on it (the download); no peer count of the
		// upload comes back.
		if dir == result.MatrixUpload {
			return nil, r.Sender
		}
		return r.Receiver, nil
	}
	main := result.MatrixUpload
	if r.Test.Direction == result.DirReceive {
		main = result.MatrixDownload
	}
	if dir == main {
		return r.Receiver, r.Sender
	}
	if r.Reverse != nil {
		return r.Reverse.Receiver, r.Reverse.Sender
	}
	return nil, nil
}

func ptr(v float64) *float64 { return &v }

// ClientSessions is the Session that runs real client tests
// (dialect.RunClient), each beside a latency probe when Latency is set.
type ClientSessions struct {
	// Latency, when set, probes the RTT before and during each test.
	Latency *echo.LoadProbeConfig
}

// Run runs one client test, beside the latency probe when set.
func (s ClientSessions) Run(ctx context.Context, cfg session.ClientConfig) (*result.Result, *result.UnderLoad, error) {
	if s.Latency == nil {
		r, err := dialect.RunClient(ctx, cfg)
		return r, nil, err
	}
	r, lat, err := echo.ClientUnderLoad(ctx, cfg, *s.Latency)
	if err != nil && r == nil {
		err = fmt.Errorf("latency probe: %w", err)
	}
	return r, lat, err
}
