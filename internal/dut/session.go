package dut

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultStepTimeout bounds each step of a conversation (a prompt, the
// answer to a command) when Options.StepTimeout is 0.
const DefaultStepTimeout = 5 * time.Second

// maxTranscript caps the transcript kept in memory (lines); older lines are
// dropped and counted.
const maxTranscript = 5000

// maxLine caps one line of device output; a device that never ends a line
// (garbage, a binary stream) cannot grow memory without bound.
const maxLine = 4096

// Entry is one line of the transcript.
type Entry struct {
	At   time.Time
	Sent bool // true: we sent it; false: the device printed it
	// Text is the line as a terminal shows it (colours dropped, erased
	// prompts gone): what the adapters parse.
	Text string
	// Raw is the device's bytes for the line in caret notation (^[ for
	// ESC, ^M for CR), when they differ from Text.
	Raw string
}

// String renders an entry as "15:04:05.000 > text" (sent) or "< text";
// a device line whose raw bytes differ from what a terminal shows is
// followed by them: "< text   [raw ^[[1;32muart:~$ ^[[m^[[8D^[[Jtext^M]".
func (e Entry) String() string {
	dir := "<"
	if e.Sent {
		dir = ">"
	}
	s := e.At.UTC().Format("15:04:05.000") + " " + dir + " " + e.Text
	if e.Raw != "" {
		s += "   [raw " + e.Raw + "]"
	}
	return s
}

// ErrLineClosed is wrapped by the error a Session returns once the device's
// line has closed (EOF, a serial port unplugged, a dropped telnet
// connection).
var ErrLineClosed = errors.New("the line to the device closed")

// ErrReset is wrapped when the device printed its boot banner in the middle
// of a conversation.
var ErrReset = errors.New("the device reset")

// ErrRefused is wrapped when the device refused a command or said its test
// failed; the error quotes the device's line.
var ErrRefused = errors.New("the device refused or failed")

// ErrTimeout is wrapped when the device did not give the expected answer
// within a step's timeout.
var ErrTimeout = errors.New("no answer from the device in time")

// ctxEnd is a context's end told in words a user reads ("no answer from
// the device in time", "the run was stopped") rather than Go's; errors.Is
// still finds the context error and the given sentinel.
type ctxEnd struct {
	msg  string
	errs []error
}

func (e *ctxEnd) Error() string   { return e.msg }
func (e *ctxEnd) Unwrap() []error { return e.errs }

// ctxEnded words a context's error: a deadline as late (wrapping late,
// e.g. ErrTimeout), a cancellation as the run being stopped.
func ctxEnded(err, late error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &ctxEnd{msg: late.Error(), errs: []error{late, err}}
	case errors.Is(err, context.Canceled):
		return &ctxEnd{msg: "the run was stopped", errs: []error{err}}
	}
	return err
}

// conn is the line-oriented half of a Session: it reads the device's
// output into lines, keeps the transcript, and lets a caller wait for a
// line that matches.
type conn struct {
	rw io.ReadWriteCloser

	mu       sync.Mutex
	lines    []string // complete lines since the last mark, as shown
	scr      screen   // the terminal model; its current line is unterminated (a prompt, typically)
	readErr  error
	changed  chan struct{} // closed and replaced on every change
	trans    []Entry
	dropped  int
	lastSeen time.Time

	// fed counts reads of device output, sentAt is fed when the last
	// command was sent: a prompt counts only if output came after it
	// (the prompt pending before the command is stale).
	fed, sentAt atomic.Uint64
}

func newConn(rw io.ReadWriteCloser) *conn {
	c := &conn{rw: rw, changed: make(chan struct{})}
	go c.readLoop()
	return c
}

func (c *conn) readLoop() {
	buf := make([]byte, 4096)
	for {
		n, err := c.rw.Read(buf)
		if n > 0 {
			c.feed(buf[:n])
		}
		if err != nil {
			c.mu.Lock()
			if err == io.EOF {
				err = ErrLineClosed
			} else {
				err = fmt.Errorf("%w: %v", ErrLineClosed, err)
			}
			c.readErr = err
			c.notifyLocked()
			c.mu.Unlock()
			return
		}
	}
}

func (c *conn) feed(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fed.Add(1)
	c.lastSeen = time.Now()
	c.scr.write(p, c.addLineLocked)
	c.notifyLocked()
}

// partialLocked returns the unterminated line as a terminal shows it.
func (c *conn) partialLocked() string { return c.scr.line() }

// rawOf returns raw in caret notation when it differs from text, else "".
func rawOf(text string, raw []byte) string {
	r := caret(raw)
	if r == text || r == text+"^M" {
		return ""
	}
	return r
}

func (c *conn) addLineLocked(l string, raw []byte) {
	c.lines = append(c.lines, l)
	if len(c.lines) > maxTranscript {
		c.lines = c.lines[len(c.lines)-maxTranscript:]
	}
	c.recordLocked(Entry{Text: l, Raw: rawOf(l, raw)})
}

func (c *conn) recordLocked(e Entry) {
	e.At = time.Now()
	c.trans = append(c.trans, e)
	if len(c.trans) > maxTranscript {
		c.dropped += len(c.trans) - maxTranscript
		c.trans = c.trans[len(c.trans)-maxTranscript:]
	}
}

func (c *conn) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// send writes one command line, ended by CR LF (what a terminal sends and
// every shell here accepts).
func (c *conn) send(line string) error {
	c.mu.Lock()
	c.recordLocked(Entry{Sent: true, Text: line})
	err := c.readErr
	c.sentAt.Store(c.fed.Load())
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if _, err := io.WriteString(c.rw, line+"\r\n"); err != nil {
		return fmt.Errorf("%w: writing %q: %v", ErrLineClosed, line, err)
	}
	return nil
}

// mark forgets the lines read so far: the next wait looks only at output
// that arrives after it (and the unterminated line now pending).
func (c *conn) mark() {
	c.mu.Lock()
	c.lines = nil
	c.mu.Unlock()
}

// match is asked about each new complete line (final) and about the
// pending unterminated line (final false). It returns done when the wait is
// over, or an error that ends it.
type match func(line string, final bool) (done bool, err error)

// wait calls m on every line since the last mark until m is done, fails,
// the line closes, ctx ends or timeout passes (0: only ctx). The lines m
// has seen are returned either way.
func (c *conn) wait(ctx context.Context, timeout time.Duration, what string, m match) ([]string, error) {
	var tc <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	seen := 0
	for {
		c.mu.Lock()
		lines, partial, rerr, ch := c.lines, c.partialLocked(), c.readErr, c.changed
		c.mu.Unlock()
		for ; seen < len(lines); seen++ {
			done, err := m(lines[seen], true)
			if err != nil || done {
				c.consume(seen + 1)
				return lines[:seen+1], err
			}
		}
		if partial != "" {
			if done, err := m(partial, false); err != nil || done {
				c.consume(seen)
				return lines[:seen], err
			}
		}
		if rerr != nil {
			return lines, fmt.Errorf("waiting for %s: %w", what, rerr)
		}
		select {
		case <-ch:
		case <-tc:
			return lines, fmt.Errorf("waiting for %s: %w within %v%s", what, ErrTimeout, timeout, c.lastOutput())
		case <-ctx.Done():
			return lines, fmt.Errorf("waiting for %s: %w", what, ctxEnded(ctx.Err(), ErrTimeout))
		}
	}
}

// consume drops the first n lines, so the next wait starts after them.
func (c *conn) consume(n int) {
	c.mu.Lock()
	if n <= len(c.lines) {
		c.lines = c.lines[n:]
	}
	c.mu.Unlock()
}

// lastOutput describes the device's last output, for error messages.
func (c *conn) lastOutput() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.trans) - 1; i >= 0; i-- {
		if !c.trans[i].Sent {
			return fmt.Sprintf(" (last device output %s ago: %q)", time.Since(c.trans[i].At).Round(time.Millisecond), trunc(c.trans[i].Text, 80))
		}
	}
	if p := c.partialLocked(); p != "" {
		return fmt.Sprintf(" (device printed only %q)", trunc(p, 80))
	}
	return " (the device printed nothing)"
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// transcript returns a copy of the transcript; the unterminated line, if
// any, is included as the last entry.
func (c *conn) transcript() []Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Entry, 0, len(c.trans)+2)
	if c.dropped > 0 {
		out = append(out, Entry{At: c.trans[0].At, Text: fmt.Sprintf("[%d earlier lines dropped]", c.dropped)})
	}
	out = append(out, c.trans...)
	if p := c.partialLocked(); p != "" || len(c.scr.pendingRaw()) > 0 {
		out = append(out, Entry{At: c.lastSeen, Text: p, Raw: rawOf(p, c.scr.pendingRaw())})
	}
	return out
}

func (c *conn) close() error { return c.rw.Close() }
