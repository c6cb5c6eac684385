package serve

import (
	"io"
	"strconv"
	"sync"

	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sharedcause"
)

// Output is how a server prints its tests.
type Output int

// The outputs.
const (
	Text Output = iota // iperf-style text: a table per test, intervals as they come
	JSON               // one wirebench/1 document per test, one per line
	CSV                // each test's intervals and summary as CSV, one header
)

// Printer prints the tests of a server as they run and end, in one
// output. Tests run at once: it keeps one text table per test and writes
// each line whole.
type Printer struct {
	out      io.Writer
	output   Output
	unit     byte
	enhanced bool

	// causes says the causes the tests share once with their count
	// (sharedcause): in text on out, else through logf (stdout carries
	// documents only; set by Run, nil says nothing).
	causes *sharedcause.Tally
	logf   func(format string, args ...any)

	mu        sync.Mutex // guards texts, udpTests and csvHeader
	texts     map[int]*report.Text
	udpTests  map[int]bool
	csvHeader bool
}

// NewPrinter prints to out (serialised: tests write at once) in output;
// unit is the text's rate unit (report.Text.SetFormat) and enhanced asks
// for iperf2 -e's sender figures.
func NewPrinter(out io.Writer, output Output, unit byte, enhanced bool) *Printer {
	p := &Printer{out: &syncWriter{w: out}, output: output, unit: unit, enhanced: enhanced,
		texts: map[int]*report.Text{}, udpTests: map[int]bool{}}
	p.causes = sharedcause.NewTally(p.sayCause, 0)
	return p
}

// sayCause says a line of the shared causes' tally.
func (p *Printer) sayCause(line string) {
	switch {
	case p.output == Text:
		_, _ = io.WriteString(p.out, line+"\n")
	case p.logf != nil:
		p.logf("%s", line)
	}
}

// Close says the shared causes' counts not yet said; call it once every
// test has been printed.
func (p *Printer) Close() { p.causes.Close() }

func (p *Printer) text(id int) *report.Text {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.texts[id]
	if t == nil {
		t = report.NewText(p.out, strconv.Itoa(id))
		t.SetFormat(p.unit)
		t.SetEnhanced(p.enhanced)
		p.texts[id] = t
	}
	return t
}

// Hook sets cfg's start and interval hooks to print each test's header
// and interval lines (text only: JSON and CSV print each test at its end).
func (p *Printer) Hook(cfg *session.ServerConfig) {
	if p.output != Text {
		return
	}
	cfg.OnTestStart = func(id int, r *result.Result) {
		p.mu.Lock()
		p.udpTests[id] = r.Test.Protocol == result.UDP
		p.mu.Unlock()
		p.text(id).Header(r.Test, "server", "", r.Test.Peer)
	}
	cfg.OnInterval = func(id int, in result.Interval) {
		p.mu.Lock()
		udp := p.udpTests[id]
		p.mu.Unlock()
		p.text(id).Interval(strconv.Itoa(id), in, udp, in.Flow != "reverse")
	}
	// Parallel streams of one client (iperf -P): each stream's line,
	// then the SUM, under the group's one table.
	cfg.OnGroupInterval = func(group int, streams []session.StreamInterval, sum *result.Interval) {
		p.mu.Lock()
		udp := p.udpTests[group]
		p.mu.Unlock()
		t := p.text(group)
		for _, st := range streams {
			t.Interval(strconv.Itoa(st.ID), st.Interval, udp, true)
		}
		if sum != nil {
			t.Interval("SUM", *sum, udp, true)
		}
	}
}

// Print prints test id's result: its summary (and the device's figures)
// in text, its document in JSON, its rows in CSV. A warning of a cause
// the server's tests share (sharedcause: its socket's drops, its CPU) is
// not printed in the text's summary: the tally says it once, with its
// count, after the first test it appears in; every document keeps it.
func (p *Printer) Print(id int, r *result.Result) {
	defer p.causes.Add(id, r)
	switch p.output {
	case JSON:
		_ = report.WriteJSON(p.out, r, false)
	case CSV:
		p.mu.Lock()
		if !p.csvHeader {
			_ = report.WriteCSVHeader(p.out)
			p.csvHeader = true
		}
		p.mu.Unlock()
		_ = report.WriteCSV(p.out, r)
	default:
		t := p.text(id)
		if own := sharedcause.Own(r.Warnings); len(own) < len(r.Warnings) {
			cp := *r
			cp.Warnings = own
			t.Summary(&cp)
		} else {
			t.Summary(r)
		}
		p.mu.Lock()
		delete(p.texts, id)
		delete(p.udpTests, id)
		for _, st := range r.Streams {
			delete(p.texts, st.ID)
			delete(p.udpTests, st.ID)
		}
		p.mu.Unlock()
		if r.Device != nil {
			_ = report.WriteDevice(p.out, r)
		}
	}
}

// Listening says where the server listens: a line on out in text, else
// through logf (stdout carries documents only).
func (p *Printer) Listening(bind string, port int, logf func(string, ...any)) {
	if p.output == Text {
		report.NewText(p.out, "").Listening(bind, port)
	} else {
		logf("listening on TCP and UDP port %d", port)
	}
}

// syncWriter serialises writes from concurrent tests to one writer.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}
