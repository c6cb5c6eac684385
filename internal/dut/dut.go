package dut

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// Options configure a Session.
type Options struct {
	// Shell names the adapter (zephyr, esp-idf, harmony, lwip); "" or
	// "auto" detects it from the banner and the help text.
	Shell string
	// StepTimeout bounds each step: a prompt, a command's answer, a stop
	// (default DefaultStepTimeout).
	StepTimeout time.Duration
	// ReportTimeout bounds the wait for the device's report once the test
	// should have ended (default DefaultReportTimeout).
	ReportTimeout time.Duration
}

// DefaultReportTimeout is how long after a test's planned end the device
// may take to print its report.
const DefaultReportTimeout = 10 * time.Second

func (o Options) withDefaults() Options {
	if o.StepTimeout <= 0 {
		o.StepTimeout = DefaultStepTimeout
	}
	if o.ReportTimeout <= 0 {
		o.ReportTimeout = DefaultReportTimeout
	}
	return o
}

// Session is a conversation with one device's shell. Its methods are not
// safe for concurrent use, except Transcript.
type Session struct {
	c *conn
	a *Adapter
	o Options

	role  Role
	test  Test
	lines []string // device output since the test's command
	begun bool
	// note is the last line check let pass as a note: quoted before a
	// failure that follows it ("Invalid IPv4 address x", "Please specify
	// the IP address of the remote server.").
	note string
	// retried is set while a busy server is stopped and started again.
	retried bool

	// firmware describes the firmware as detected ("Zephyr 3.4.0 (zperf
	// 3.x syntax)"); "" when the adapter has one syntax only.
	firmware string
}

// Open connects to the device named by spec (see ParseSpec), waits for
// its prompt and, for "auto", detects its shell.
func Open(ctx context.Context, spec string, o Options) (*Session, error) {
	sp, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	rw, err := sp.open(ctx, o.withDefaults().StepTimeout)
	if err != nil {
		return nil, err
	}
	s, err := New(ctx, rw, o)
	if err != nil {
		return s, fmt.Errorf("device %s: %w", spec, err)
	}
	return s, nil
}

// New starts a Session on an open line to the shell. On error the session
// is returned too (closed), for its transcript.
func New(ctx context.Context, rw io.ReadWriteCloser, o Options) (*Session, error) {
	o = o.withDefaults()
	s := &Session{c: newConn(rw), o: o}
	if o.Shell != "" && o.Shell != "auto" {
		a, err := Lookup(o.Shell)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		s.a = a
	}
	if err := s.hello(ctx); err != nil {
		_ = s.Close()
		return s, err
	}
	return s, nil
}

// hello wakes the shell with an empty line and waits for its prompt; for
// auto it then asks for help and picks the adapter.
func (s *Session) hello(ctx context.Context) error {
	if err := s.c.send(""); err != nil {
		return err
	}
	seen, err := s.prompt(ctx, "the shell's prompt")
	if err != nil {
		return err
	}
	if s.a != nil {
		return s.refine(ctx, seen)
	}
	if err := s.c.send("help"); err != nil {
		return err
	}
	help, err := s.prompt(ctx, "the answer to help")
	if err != nil {
		return err
	}
	text := strings.Join(append(seen, help...), "\n")
	for _, a := range adapters {
		if a.Detect.MatchString(text) {
			s.a = a
			return s.refine(ctx, append(seen, help...))
		}
	}
	return fmt.Errorf("could not tell the device's shell from its banner and help output; name it with --dut-shell (%s)", strings.Join(Shells(), ", "))
}

// refine picks the syntax of a firmware that has several (Zephyr: by its
// version, from kernel version or the banner in seen).
func (s *Session) refine(ctx context.Context, seen []string) error {
	if s.a.Name == "esp-idf" {
		return s.refineESP(ctx, seen)
	}
	if s.a.Name != "zephyr" {
		return nil
	}
	if err := s.c.send("kernel version"); err != nil {
		return err
	}
	ver, err := s.prompt(ctx, `the answer to "kernel version"`)
	if err != nil && !errors.Is(err, ErrTimeout) {
		return err
	}
	// A shell that does not answer this leaves the version unknown; the
	// steps that follow say what is wrong with it.
	major, minor, patch, ok := zephyrVersion(withoutLogs(ver))
	if !ok {
		major, minor, patch, ok = zephyrVersion(seen)
	}
	if s.a.Syntax == zephyrIperf3.name {
		s.a, s.firmware = zephyrIperf3For(major, minor, patch, ok)
		return nil
	}
	s.a, s.firmware = zephyrFor(major, minor, patch, ok)
	return nil
}

// refineESP tells an iperf whose -b takes bit/s from one that takes Mbit/s
// by its help text (asked for when the shell was named, not detected).
func (s *Session) refineESP(ctx context.Context, seen []string) error {
	text := strings.Join(seen, "\n")
	if !strings.Contains(text, "iperf") {
		if err := s.c.send("help"); err != nil {
			return err
		}
		help, err := s.prompt(ctx, "the answer to help")
		if err != nil && !errors.Is(err, ErrTimeout) {
			return err
		}
		text = strings.Join(help, "\n")
	}
	s.a = newESP(espBits.MatchString(text))
	s.firmware = "ESP-IDF iperf (" + s.a.Syntax + ")"
	return nil
}

// Firmware describes the firmware as detected, e.g. "Zephyr 3.4.0 (zperf
// 3.x syntax)"; "" when its adapter has a single syntax.
func (s *Session) Firmware() string { return s.firmware }

// settle is how long a prompt must stay the last output before it counts:
// help text can end a chunk with a '>' that is not a prompt.
const settle = 50 * time.Millisecond

// prompt waits (one step) for the shell's prompt and returns the complete
// lines before it.
func (s *Session) prompt(ctx context.Context, what string) ([]string, error) {
	re := anyPrompt
	if s.a != nil {
		re = s.a.Prompt
	}
	deadline := time.Now().Add(s.o.StepTimeout)
	var all []string
	for {
		lines, err := s.c.wait(ctx, time.Until(deadline), what, func(l string, final bool) (bool, error) {
			return !final && s.c.fed.Load() > s.c.sentAt.Load() && re.MatchString(l), nil
		})
		all = append(all, lines...)
		if err != nil {
			return all, err
		}
		select {
		case <-time.After(settle):
		case <-ctx.Done():
			return all, fmt.Errorf("waiting for %s: %w", what, ctxEnded(ctx.Err(), ErrTimeout))
		}
		s.c.mu.Lock()
		still := len(s.c.lines) == 0 && re.MatchString(s.c.partialLocked())
		s.c.mu.Unlock()
		if still {
			return all, nil
		}
	}
}

// Shell returns the adapter's name.
func (s *Session) Shell() string { return s.a.Name }

// Dialect returns the wirebench client dialect the device's server needs
// ("" for the default).
func (s *Session) Dialect() string { return s.a.Dialect }

// Check says whether the device's firmware can take role in t at all
// (lwIP has no UDP), before any test is started.
func (s *Session) Check(role Role, t Test) error {
	_, err := s.a.Commands(role, t)
	return err
}

// StartServer starts the device's server for t and waits (one step) until
// it says it listens.
func (s *Session) StartServer(ctx context.Context, t Test) error {
	return s.start(ctx, RoleServer, t)
}

// StartClient starts the device's client for t, towards t.Peer. Our server
// must already listen.
func (s *Session) StartClient(ctx context.Context, t Test) error {
	if t.Peer == "" {
		return errors.New("the device needs the address of our side (--dut-peer)")
	}
	return s.start(ctx, RoleClient, t)
}

func (s *Session) start(ctx context.Context, role Role, t Test) error {
	if t.Proto != "tcp" && t.Proto != "udp" {
		return fmt.Errorf("device test protocol %q: want tcp or udp", t.Proto)
	}
	cmds, err := s.a.Commands(role, t)
	if err != nil {
		return err
	}
	s.role, s.test, s.lines, s.begun = role, t, nil, false
	for _, pre := range cmds[:len(cmds)-1] {
		if err := s.c.send(pre); err != nil {
			return err
		}
		lines, err := s.prompt(ctx, fmt.Sprintf("the prompt after %q", pre))
		if err == nil {
			err = s.check(lines)
		}
		if err != nil {
			return err
		}
	}
	main := cmds[len(cmds)-1]
	s.c.mark()
	if err := s.c.send(main); err != nil {
		return err
	}
	s.begun = true
	if role == RoleClient {
		return nil
	}
	if s.a.Started == nil {
		lines, err := s.prompt(ctx, fmt.Sprintf("the prompt after %q", main))
		s.lines = append(s.lines, lines...)
		if err == nil {
			err = s.check(lines)
		}
		return err
	}
	busy := false
	lines, err := s.c.wait(ctx, s.o.StepTimeout, fmt.Sprintf("the device's answer to %q", main), func(l string, final bool) (bool, error) {
		if !final {
			return false, nil
		}
		if s.a.Busy != nil && s.a.Busy.MatchString(l) {
			busy = true
			return true, nil
		}
		if err := s.check([]string{l}); err != nil {
			return false, err
		}
		return s.a.Started.MatchString(l), nil
	})
	s.lines = append(s.lines, lines...)
	if err != nil || !busy {
		return err
	}
	return s.busy(ctx, role, t, main, lines[len(lines)-1])
}

// busy handles a device whose server already runs: one with a stop
// command is stopped and asked again, once. One without (Zephyr 2.x) is
// taken as serving on the port asked for: its server listens until the
// board resets, on the port of the first start, which for a rerun is the
// same -p. If it listens elsewhere, our client's test fails and the
// transcript shows the device's "already started".
func (s *Session) busy(ctx context.Context, role Role, t Test, main, line string) error {
	if stop := s.a.Stop(role, t); len(stop) > 0 {
		if s.retried {
			return fmt.Errorf("%w: %q after %q, also after stopping it", ErrRefused, trunc(strings.TrimSpace(line), 120), main)
		}
		s.retried = true
		defer func() { s.retried = false }()
		if err := s.Stop(ctx); err != nil {
			return err
		}
		return s.start(ctx, role, t)
	}
	_, err := s.prompt(ctx, fmt.Sprintf("the prompt after %q", main))
	return err
}

// anyFailed matches what any shell prints for a command it does not know
// or a usage it does not accept.
var anyFailed = regexp.MustCompile(`(?i)command not found|^\s*usage:`)

// check fails on a boot banner (reset) or a refusal in lines, quoting the
// device's line. Log lines and the adapter's notes never fail.
func (s *Session) check(lines []string) error {
	for _, l := range lines {
		if logLine.MatchString(l) || s.a.Note != nil && s.a.Note.MatchString(l) {
			s.note = l
			continue
		}
		if s.a.Banner.MatchString(l) {
			return fmt.Errorf("%w: it printed its boot banner %q", ErrReset, trunc(strings.TrimSpace(l), 80))
		}
		if s.a.Failed.MatchString(l) || anyFailed.MatchString(l) {
			quote := fmt.Sprintf("%q", trunc(strings.TrimSpace(l), 120))
			if s.note != "" && !logLine.MatchString(s.note) && strings.HasPrefix(strings.ToLower(strings.TrimSpace(s.note)), "invalid") {
				quote = fmt.Sprintf("%q, %s", trunc(strings.TrimSpace(s.note), 80), quote)
			}
			return fmt.Errorf("%w: %s", ErrRefused, quote)
		}
		s.note = ""
	}
	return nil
}

// Wait waits for the device's report of the test started last and parses
// it. ctx bounds the wait (callers give the test's duration plus
// Options.ReportTimeout; RunDeviceServer and RunDeviceClient do). Figures
// parsed before an error are returned with it.
func (s *Session) Wait(ctx context.Context) (result.Device, error) {
	d := result.Device{Shell: s.a.Name, Role: string(s.role), Firmware: s.firmware}
	if !s.begun {
		return d, errors.New("no device test was started")
	}
	done := s.a.Done(s.role, s.test)
	finished := false
	for _, l := range s.lines {
		if done(l) {
			finished = true
		}
	}
	if !finished {
		lines, err := s.c.wait(ctx, 0, "the device's report", func(l string, final bool) (bool, error) {
			if !final {
				return false, nil
			}
			if err := s.check([]string{l}); err != nil {
				return false, err
			}
			return done(l), nil
		})
		s.lines = append(s.lines, lines...)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w%s", err, s.c.lastOutput())
			}
			return d, err
		}
	}
	p, err := s.a.Parse(s.role, s.test, s.lines)
	p.Shell, p.Role, p.Firmware = d.Shell, d.Role, s.firmware
	return p, err
}

// Stop stops the device's test (a server keeps listening otherwise) and
// waits (one step) for the prompt.
func (s *Session) Stop(ctx context.Context) error {
	for _, cmd := range s.a.Stop(s.role, s.test) {
		if err := s.c.send(cmd); err != nil {
			return err
		}
		if _, err := s.prompt(ctx, fmt.Sprintf("the prompt after %q", cmd)); err != nil {
			return err
		}
	}
	s.begun = false
	return nil
}

// Transcript returns the conversation so far, both directions,
// timestamped.
func (s *Session) Transcript() []Entry { return s.c.transcript() }

// TranscriptLines renders the transcript, one string per entry.
func (s *Session) TranscriptLines() []string {
	var out []string
	for _, e := range s.Transcript() {
		out = append(out, e.String())
	}
	return out
}

// Close closes the line to the device.
func (s *Session) Close() error { return s.c.close() }
