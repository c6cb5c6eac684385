package iperf3

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/admit"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf3/serverauth"
	"github.com/wirebench/wirebench/internal/udpio"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// Config configures the iperf3 side of a Server.
type Config struct {
	// Port is iperf3's own port (TCP and UDP), usually session.DefaultIperf3Port;
	// 0 serves iperf3 only on the iperf2 port, -1 picks an ephemeral port.
	Port int
	// MaxRate caps a test's total rate in bit/s (0 = no cap): a test asking
	// for more is refused with iperf3's IETOTALRATE (27), and an unpaced
	// test measured above it is ended with the same code.
	MaxRate float64
	// Auth, when set, is asked before each test runs; a test it refuses
	// gets iperf3's IEAUTHTEST (142), "test authorization failed".
	Auth *serverauth.Auth
}

// Enable makes s answer iperf3 clients as well: on its own port (when
// cfg.Port is not 0) and on the iperf2 port, where iperf3 control and data
// connections are told apart by their cookie characters and UDP streams by
// the 4-byte connect message. Each control connection is its own test;
// --max-tests (ServerConfig.MaxTests) bounds how many run at once. Call it
// after Listen and before Serve; it returns the iperf3 port (0 when none).
func Enable(ctx context.Context, s *session.Server, cfg Config) (int, error) {
	hub := &i3Hub{s: s, cfg: cfg, tests: map[i3wire.Cookie]*i3Test{}}
	main := &i3Demux{hub: hub, conn: s.UDPConn(), streams: map[netip.AddrPort]*i3SrvStream{}}
	s.AddTCPProtocol(session.TCPProtocol{Name: "iperf3", Match: i3wire.LooksLikeCookie, Serve: hub.serveConn})
	s.AddUDPProtocol(session.UDPProtocol{Name: "iperf3", Match: main.match, Datagram: main.datagram, Flush: main.flush, Done: main.done})
	if cfg.Port == 0 {
		return 0, nil
	}
	port := max(cfg.Port, 0)
	ln, err := s.ListenTCP(ctx, port)
	if err != nil {
		return 0, fmt.Errorf("for iperf3: %w", err)
	}
	port = ln.Addr().(*net.TCPAddr).Port
	uaddr := net.JoinHostPort(s.Config().Bind, strconv.Itoa(port))
	uc, err := udpio.Listen(ctx, s.Network("udp"), uaddr, s.UDPOptions(true))
	if err != nil {
		ln.Close()
		return 0, fmt.Errorf("listening on udp %s for iperf3: %w", uaddr, err)
	}
	s.OwnPort(port)
	own := &i3Demux{hub: hub, conn: &session.LockedConn{Conn: uc}, streams: map[netip.AddrPort]*i3SrvStream{}}
	s.AddListener(func(ctx context.Context) {
		stop := context.AfterFunc(ctx, func() { ln.Close(); uc.Close() })
		defer stop()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); own.serve(ctx) }()
		hub.accept(ctx, ln)
		uc.Close()
		wg.Wait()
	})
	return port, nil
}

// ctrlMsg is one state read by the control reader, or its error.
type ctrlMsg struct {
	st  i3wire.State
	err error
}

// i3ServerTest is the control side of one server test.
type i3ServerTest struct {
	t     *i3Test
	conn  *i3wire.Conn
	ctrl  net.Conn
	m     *i3wire.Machine
	r     *result.Result
	id    int
	start time.Time
	end   time.Time
	perIv []result.Interval
	// omitted is each stream's counts in the client's -O period, by id.
	omitted map[string]result.Interval
	// reported: the result was handed on (it is, exactly once).
	reported bool
	// quiet: a wirebench probe's test (wb_probe), neither announced nor
	// handed on.
	quiet bool
}

// finish hands the test's result on, its admission given back first: a
// client that starts its next test at once is not told the server is busy.
func (sv *i3ServerTest) finish() {
	sv.reported = true
	sv.t.free()
	if sv.quiet {
		return
	}
	sv.t.hub.s.Finished(sv.id, sv.r)
}

func (sv *i3ServerTest) send(ctx context.Context, st i3wire.State) error {
	sctx, cancel := step(ctx)
	defer cancel()
	if err := sv.m.Send(st); err != nil {
		return err
	}
	if err := sv.conn.WriteState(sctx, st); err != nil {
		return fmt.Errorf("sending %v: %w", st, err)
	}
	return nil
}

func (sv *i3ServerTest) refuse(ctx context.Context, se *i3wire.ServerErr) error {
	sctx, cancel := step(ctx)
	defer cancel()
	_ = sv.conn.WriteServerErr(sctx, se)
	return fmt.Errorf("refused: %w", se)
}

// run is the server's side of the conversation.
func (sv *i3ServerTest) run(ctx context.Context) error {
	t, h := sv.t, sv.t.hub
	if err := sv.send(ctx, i3wire.ParamExchange); err != nil {
		return err
	}
	sctx, cancel := step(ctx)
	p, err := sv.conn.ReadParams(sctx)
	cancel()
	if err != nil {
		if errors.Is(err, i3wire.ErrBadParams) || errors.Is(err, i3wire.ErrInvalidJSON) || errors.Is(err, i3wire.ErrJSONTooLarge) {
			_ = sv.refuse(ctx, &i3wire.ServerErr{IErrno: i3wire.ErrnoRecvParams})
		}
		return fmt.Errorf("reading the parameters: %w", err)
	}
	if h.cfg.Auth != nil {
		who, err := h.cfg.Auth.Authorize(t.cookie, p)
		if err != nil {
			_ = sv.refuse(ctx, &i3wire.ServerErr{IErrno: i3wire.ErrnoAuthTest})
			return fmt.Errorf("test authorization failed: %w", err)
		}
		h.s.Log("i3-auth", fmt.Sprintf("iperf3: %s: authenticated (%s)", t.peer, who))
	}
	if se := h.refusal(p, t.peer); se != nil {
		return sv.refuse(ctx, se)
	}
	if err := sv.refuseReverse(ctx, p); err != nil {
		return err
	}
	if err := h.startAccepting(ctx, t, p); err != nil {
		return sv.refuse(ctx, &i3wire.ServerErr{IErrno: i3wire.ErrnoStreamAccept})
	}
	if err := sv.send(ctx, i3wire.CreateStreams); err != nil {
		return err
	}
	// One goroutine reads the control connection until the test's end
	// message: a client that vanishes or sends something else is noticed
	// at once, in every state.
	msgs := make(chan ctrlMsg, 1)
	var rd sync.WaitGroup
	rd.Add(1)
	go func() {
		defer rd.Done()
		var st i3wire.State
		err := h.s.Catch("iperf3: reading the control connection of "+t.peer.String(), func() (err error) {
			st, err = sv.conn.ReadState(ctx)
			return err
		})
		msgs <- ctrlMsg{st, err}
	}()
	defer func() { sv.ctrl.Close(); rd.Wait() }()

	timer := time.NewTimer(i3StepTimeout)
	defer timer.Stop()
	select {
	case <-t.ready:
	case m := <-msgs:
		h.closeStreams(t)
		return sv.badMsg(m, "while waiting for the data streams")
	case <-timer.C:
		h.closeStreams(t)
		return sv.refuse(ctx, &i3wire.ServerErr{IErrno: i3wire.ErrnoStreamAccept})
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := sv.send(ctx, i3wire.TestStart); err != nil {
		return err
	}
	// The test's clock starts before TEST_RUNNING goes: the client sends
	// as soon as it reads it, and bytes that arrive while this side
	// still sets up must fall inside the test's time.
	start := time.Now()
	if err := sv.send(ctx, i3wire.TestRunning); err != nil {
		return err
	}
	m, err := sv.runData(ctx, start, msgs)
	if err != nil {
		return err
	}
	if err := sv.m.Recv(m.st); err != nil {
		return fail(sv, err)
	}
	return sv.exchange(ctx)
}

// refuseReverse refuses a UDP test in which we would send (-R, --bidir)
// to a source we may not send to: with a result saying why, and iperf3's
// "test authorization failed" (IEAUTHTEST), the nearest i_errno iperf3
// has for a test the server will not run for this client, followed by the
// reason in words, which a wirebench client shows (iperf3 ignores it). TCP
// tests send on connections the client opened and are not refused.
func (sv *i3ServerTest) refuseReverse(ctx context.Context, p *i3wire.Params) error {
	t, h := sv.t, sv.t.hub
	if p.Protocol != i3wire.ProtoUDP || !p.Reverse && !p.Bidirectional {
		return nil
	}
	why := h.s.CheckReverse(t.peer.Addr())
	if why == nil {
		return nil
	}
	h.mu.Lock()
	t.p, t.udp = p, true // not accepting: no stream can find it
	h.mu.Unlock()
	sv.start = time.Now()
	h.s.RefuseTest(sv.newResult(), why)
	_ = sv.refuse(ctx, &i3wire.ServerErr{IErrno: i3wire.ErrnoAuthTest, Text: why.Error()})
	return why
}

// fail reports a started test that failed.
func fail(sv *i3ServerTest, err error) error {
	if sv.r.Error == "" {
		sv.r.Error = err.Error()
	}
	sv.finish()
	return err
}

// badMsg describes a control message that came when none should.
func (sv *i3ServerTest) badMsg(m ctrlMsg, when string) error {
	if m.err != nil {
		return fmt.Errorf("the control connection failed %s: %w", when, m.err)
	}
	if err := sv.m.Recv(m.st); err != nil {
		return fmt.Errorf("%s: %w", when, err)
	}
	return fmt.Errorf("the client sent %v %s", m.st, when)
}

// i3Refusal is a test refused after its parameters.
func (h *i3Hub) refusal(p *i3wire.Params, peer netip.AddrPort) *i3wire.ServerErr {
	if err := p.Validate(); err != nil {
		if se, ok := errors.AsType[*i3wire.ServerErr](err); ok {
			return se
		}
		return &i3wire.ServerErr{IErrno: i3wire.ErrnoRecvParams}
	}
	if p.Time > 0 && time.Duration(p.Time)*time.Second > h.s.Config().MaxDuration {
		return &i3wire.ServerErr{IErrno: i3wire.ErrnoMaxDuration}
	}
	if h.cfg.MaxRate > 0 && p.Bandwidth > 0 && float64(p.Bandwidth)*float64(p.TotalStreams()) > h.cfg.MaxRate {
		return &i3wire.ServerErr{IErrno: i3wire.ErrnoTotalRate}
	}
	if why := admit.OverSendCap(p.Protocol == i3wire.ProtoUDP && (p.Reverse || p.Bidirectional) && h.cfg.Auth == nil, float64(p.Bandwidth)*float64(p.StreamsPerDirection()), h.s.Config().MaxSendRate); why != "" {
		h.s.Log("max-rate", "iperf3: "+peer.String()+": "+why) // the default cap on what a test that proved nothing makes us send
		return &i3wire.ServerErr{IErrno: i3wire.ErrnoTotalRate}
	}
	return nil
}

// control runs one iperf3 test from its control connection.
func (h *i3Hub) control(ctx context.Context, c net.Conn, ck i3wire.Cookie, peer netip.AddrPort) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	conn := i3wire.NewConn(c)
	t := &i3Test{hub: h, cookie: ck, peer: peer, ready: make(chan struct{}), done: make(chan struct{})}
	release, admitted := h.s.AdmitSource("iperf3", peer.Addr())
	if !admitted || !h.register(t) {
		sctx, cancel := step(ctx)
		_ = conn.WriteState(sctx, i3wire.AccessDenied)
		cancel()
		if admitted {
			release()
			h.s.Log("i3-busy", fmt.Sprintf("iperf3: %s: busy (%d tests running, --max-tests)", peer, h.s.Config().MaxTests))
		}
		return
	}
	t.free = sync.OnceFunc(func() { h.unregister(t); release() })
	defer t.free()
	defer func() {
		t.ended.Store(true)
		close(t.done)
	}()
	sv := &i3ServerTest{t: t, conn: conn, ctrl: c, m: i3wire.NewMachine(i3wire.RoleServer)}
	defer func() {
		if v := recover(); v != nil {
			h.s.LogPanic("iperf3: "+peer.String(), v)
			if sv.r != nil && !sv.reported {
				_ = fail(sv, fmt.Errorf("internal error (panic: %v); see the server log", v))
			}
		}
	}()
	if err := sv.run(ctx); err != nil {
		h.s.Log("i3-test", fmt.Sprintf("iperf3: %s: %v", peer, err))
	}
}

func (h *i3Hub) closeStreams(t *i3Test) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t.accepting = false
	for _, st := range t.streams {
		if st.send && st.tcp != nil {
			st.retr.read(st.tcp) // before the socket goes
		}
		if st.tcp != nil {
			st.tcp.Close()
		}
	}
}
