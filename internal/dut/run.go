package dut

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/session/iperf3"
)

// Runner runs wirebench's side of one test and returns its result: a
// client (RunDeviceServer), or the wait for the one test our already
// listening server answers (RunDeviceClient; see ListenOne).
type Runner func(ctx context.Context) (*result.Result, error)

// DeviceError is returned, beside a kept wirebench result, when the device
// side failed: the PC-side figures stand, the device's are missing.
type DeviceError struct{ Err error }

func (e *DeviceError) Error() string { return "device: " + e.Err.Error() }
func (e *DeviceError) Unwrap() error { return e.Err }

// serverStartGrace is how long a device's server may refuse connections
// after its shell said it started.
const serverStartGrace = 3 * time.Second

// RunDeviceServer makes the device the server for t and runs client
// against it. The client runs even when the device cannot be started (its
// server may already be running), but not when the device refused the
// command: its result is kept either way, with the device's figures, or
// the reason they are missing, in r.Device. The error is the client's,
// else a *DeviceError.
func (s *Session) RunDeviceServer(ctx context.Context, t Test, client Runner) (*result.Result, error) {
	derr := s.StartServer(ctx, t)
	if errors.Is(derr, ErrRefused) {
		// Nothing listens: running our client would only add our own
		// failure to the device's words.
		return s.attach(nil, nil, result.Device{}, fmt.Errorf("starting the device's server: %w", derr))
	}
	// A device prints that its server started before the server task has
	// bound its port (ESP-IDF's iperf prints "mode=tcp-server" and then
	// starts the task): a client refused at once is tried again for up to
	// serverStartGrace.
	r, err := session.RetryWhileRefused(ctx, serverStartGrace, client)
	var dev result.Device
	if derr == nil {
		wctx, cancel := context.WithTimeout(ctx, s.o.ReportTimeout)
		dev, derr = s.Wait(wctx)
		cancel()
	}
	if s.begun && !errors.Is(derr, ErrLineClosed) {
		if serr := s.Stop(ctx); serr != nil && derr == nil {
			derr = fmt.Errorf("stopping the device's server: %w", serr)
		}
	}
	return s.attach(r, err, dev, derr)
}

// RunDeviceClient makes the device the client for t (towards t.Peer,
// t.Port, where our server must listen) and waits with server for the
// result our side measured. Both waits end by t's duration plus
// Options.ReportTimeout. A device that cannot be started returns at once
// (no traffic will come); one that fails mid-test keeps our result.
func (s *Session) RunDeviceClient(ctx context.Context, t Test, server Runner) (*result.Result, error) {
	if err := s.StartClient(ctx, t); err != nil {
		return nil, &DeviceError{fmt.Errorf("starting the device's client: %w", err)}
	}
	bound := time.Duration(t.seconds())*time.Second + s.o.ReportTimeout
	if t.Proto == "tcp" && s.a == lwip {
		bound = max(bound, 10*time.Second+s.o.ReportTimeout) // lwiperf's client always runs 10 s
	}
	bctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	type out struct {
		r   *result.Result
		err error
	}
	ours := make(chan out, 1)
	go func() {
		r, err := server(bctx)
		ours <- out{r, err}
	}()
	dev, derr := s.Wait(bctx)
	if errors.Is(derr, ErrRefused) {
		// The device said it will not send (or failed): no traffic will
		// come, and our server's waiting is no news. Its error is dropped.
		cancel()
		o := <-ours
		return s.attach(o.r, nil, dev, derr)
	}
	if derr != nil {
		// Our server may still wait for traffic that will not come: give
		// it one report timeout, not the whole bound.
		select {
		case o := <-ours:
			return s.attach(o.r, o.err, dev, derr)
		case <-time.After(min(s.o.ReportTimeout, time.Until(deadlineOf(bctx)))):
			cancel()
		}
	}
	o := <-ours
	if errors.Is(derr, ErrLineClosed) {
		return s.attach(o.r, o.err, dev, derr)
	}
	if serr := s.Stop(ctx); serr != nil && derr == nil {
		derr = fmt.Errorf("after the test: %w", serr)
	}
	return s.attach(o.r, o.err, dev, derr)
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// attach puts the device's figures (or why they are missing) and the
// transcript into r.
func (s *Session) attach(r *result.Result, err error, dev result.Device, derr error) (*result.Result, error) {
	if s.a != nil {
		dev.Shell = s.a.Name
	}
	dev.Firmware = s.firmware
	dev.Role = string(s.role)
	return attach(r, err, dev, derr, s.TranscriptLines())
}

func attach(r *result.Result, err error, dev result.Device, derr error, transcript []string) (*result.Result, error) {
	dev.Transcript = transcript
	if derr != nil {
		dev.Error = derr.Error()
	}
	if r != nil {
		r.Device = &dev
		if derr != nil {
			r.Warn("device-side figures missing or incomplete: " + derr.Error())
		}
	}
	if err != nil {
		return r, err
	}
	if derr != nil {
		return r, &DeviceError{derr}
	}
	return r, nil
}

// WithoutDevice runs wirebench's side alone when the device could not be
// reached (Open failed with openErr; s is what Open returned, possibly
// nil, for its transcript) and records why in r.Device. A device that was
// to be the server may already be serving, so the client still runs; one
// that was to be the client sends nothing, so nothing runs.
func WithoutDevice(ctx context.Context, role Role, shell string, openErr error, s *Session, client Runner) (*result.Result, error) {
	var transcript []string
	if s != nil {
		transcript = s.TranscriptLines()
	}
	if role == RoleClient {
		return nil, &DeviceError{openErr}
	}
	r, err := client(ctx)
	return attach(r, err, result.Device{Shell: shell, Role: string(role)}, openErr, transcript)
}

// errNotInTime is what ListenOne's runner says when its context's deadline
// passed before a test arrived.
var errNotInTime = errors.New("none came in time")

// ListenOne starts a wirebench server for exactly one test (cfg.OneShot is
// forced) and returns its port and a Runner that serves until that test's
// result is in. The server stops when the Runner returns.
func ListenOne(ctx context.Context, cfg session.ServerConfig) (int, Runner, error) {
	return listenOne(ctx, cfg, false)
}

// ListenOne is ListenOne for the device of s: a device whose client speaks
// iperf3 (zephyr-iperf3) finds our server answering iperf3 on the same
// port, told apart by its first bytes.
func (s *Session) ListenOne(ctx context.Context, cfg session.ServerConfig) (int, Runner, error) {
	d, _ := dialect.Lookup(s.a.Dialect)
	return listenOne(ctx, cfg, d.Server == dialect.ServerIperf3)
}

func listenOne(ctx context.Context, cfg session.ServerConfig, withIperf3 bool) (int, Runner, error) {
	cfg.OneShot = true
	got := make(chan *result.Result, 1)
	prev := cfg.OnResult
	cfg.OnResult = func(id int, r *result.Result) {
		if prev != nil {
			prev(id, r)
		}
		select {
		case got <- r:
		default:
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	srv, err := iperf2.Listen(sctx, cfg)
	if err != nil {
		cancel()
		return 0, nil, err
	}
	if withIperf3 {
		if _, err := iperf3.Enable(sctx, srv, iperf3.Config{}); err != nil {
			cancel()
			return 0, nil, err
		}
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx) }()
	run := func(rctx context.Context) (*result.Result, error) {
		defer cancel()
		select {
		case r := <-got:
			<-served
			return r, nil
		case err := <-served:
			select {
			case r := <-got:
				return r, nil
			default:
			}
			if err == nil {
				err = errors.New("our server ended without a test")
			}
			return nil, err
		case <-rctx.Done():
			cancel()
			<-served
			select {
			case r := <-got:
				return r, nil
			default:
			}
			return nil, fmt.Errorf("no test reached our server on port %d: %w", srv.Port(), ctxEnded(rctx.Err(), errNotInTime))
		}
	}
	return srv.Port(), run, nil
}

// ReceivedCounts reads what a device counted as a UDP server from its
// figures d: the data datagrams it received and those it counted as lost.
// ok is false when d is not a server's or its firmware prints no packet
// and loss counts (ESP-IDF, lwIP): nothing is made up for them.
func ReceivedCounts(d result.Device) (received, lost int64, ok bool) {
	a, err := Lookup(d.Shell)
	if err != nil || d.Role != string(RoleServer) || d.Packets == nil || d.Lost == nil {
		return 0, 0, false
	}
	received, lost = *d.Packets, *d.Lost
	if a.PacketsIncludeLost {
		received -= lost
	}
	return max(received, 0), lost, true
}

// RunAgainstServer runs t with the device as the client of a one-test
// server of ours (cfg, ListenOne), on the port it listens on; logf says
// where. It returns the test's id on our server, its result and the
// error (RunDeviceClient).
func (s *Session) RunAgainstServer(ctx context.Context, cfg session.ServerConfig, t Test, logf func(string, ...any)) (int, *result.Result, error) {
	id := 0
	cfg.OnResult = func(i int, _ *result.Result) { id = i }
	port, run, err := s.ListenOne(ctx, cfg)
	if err != nil {
		return 0, nil, err
	}
	t.Port = port
	logf("listening on TCP and UDP port %d; device shell %s sends %s to %s", port, s.Shell(), t.Proto, t.Peer)
	r, err := s.RunDeviceClient(ctx, t, run)
	return id, r, err
}
