package iperf3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sockopt"
	"github.com/wirebench/wirebench/internal/stats"
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
	Auth *Auth
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
	s.AddUDPProtocol(session.UDPProtocol{Name: "iperf3", Match: main.match, Datagram: main.datagram, Done: main.done})
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

// i3Hub holds the iperf3 tests of one server, by cookie.
type i3Hub struct {
	s   *session.Server
	cfg Config

	mu    sync.Mutex
	tests map[i3wire.Cookie]*i3Test
	order []*i3Test // registration order, for matching UDP streams
}

// accept serves iperf3's own TCP port.
func (h *i3Hub) accept(ctx context.Context, ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			h.s.Log("i3-accept", fmt.Sprintf("iperf3: accepting a connection: %v", err))
			time.Sleep(10 * time.Millisecond)
			continue
		}
		forget := h.s.NoteAccept(c)
		h.s.Go("iperf3: "+c.RemoteAddr().String(), func() {
			defer forget()
			defer c.Close()
			h.serveConn(ctx, c, nil)
		})
	}
}

// serveConn reads the cookie of a new connection (first holds bytes
// already read) and treats it as a data stream of a test waiting for
// streams, or as a new control connection.
func (h *i3Hub) serveConn(ctx context.Context, c net.Conn, first []byte) {
	peer := session.PeerOf(c)
	buf := make([]byte, i3wire.CookieSize)
	n := copy(buf, first)
	_ = c.SetReadDeadline(time.Now().Add(h.s.Config().HeaderTimeout))
	if _, err := io.ReadFull(c, buf[n:]); err != nil {
		h.s.Log("i3-cookie", fmt.Sprintf("iperf3: %s: reading the cookie: %v", peer, err))
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	ck, err := i3wire.ParseCookie(buf)
	if err != nil {
		h.s.Log("i3-cookie", fmt.Sprintf("iperf3: %s: %v", peer, err))
		return
	}
	h.mu.Lock()
	t := h.tests[ck]
	h.mu.Unlock()
	if t != nil {
		t.attachTCP(ctx, c)
		return
	}
	h.control(ctx, c, ck, peer)
}

// register adds a new test unless MaxTests are running.
func (h *i3Hub) register(t *i3Test) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.tests) >= h.s.Config().MaxTests || h.tests[t.cookie] != nil {
		return false
	}
	h.tests[t.cookie] = t
	h.order = append(h.order, t)
	return true
}

func (h *i3Hub) unregister(t *i3Test) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.tests, t.cookie)
	for i, o := range h.order {
		if o == t {
			h.order = append(h.order[:i], h.order[i+1:]...)
			break
		}
	}
}

// pendingUDP returns the oldest test from addr that waits for UDP streams.
// Tests from one address that create streams at the same moment cannot be
// told apart (the connect message carries no cookie); the oldest wins.
// startAccepting opens t to its data streams (parameters p). iperf3's UDP
// connect message carries no cookie, so its streams are told apart only by
// source address: a UDP test waits (up to i3StepTimeout) while another UDP
// test from the same address is taking streams, so that two tests from one
// host never share them out between each other.
func (h *i3Hub) startAccepting(ctx context.Context, t *i3Test, p *i3wire.Params) error {
	udp := p.Protocol == i3wire.ProtoUDP
	deadline := time.Now().Add(i3StepTimeout)
	for {
		h.mu.Lock()
		if !udp || h.pendingUDPLocked(t.peer.Addr()) == nil {
			t.p, t.udp, t.need, t.accepting = p, udp, p.TotalStreams(), true
			h.mu.Unlock()
			return nil
		}
		h.mu.Unlock()
		if time.Now().After(deadline) {
			return fmt.Errorf("another UDP test from %v took its streams for over %v", t.peer.Addr(), i3StepTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (h *i3Hub) pendingUDPLocked(addr netip.Addr) *i3Test {
	for _, t := range h.order {
		if t.accepting && t.udp && t.peer.Addr() == addr && len(t.streams) < t.need {
			return t
		}
	}
	return nil
}

// i3Test is one iperf3 test on the server.
type i3Test struct {
	hub    *i3Hub
	cookie i3wire.Cookie
	peer   netip.AddrPort
	p      *i3wire.Params
	udp    bool

	// Guarded by hub.mu while streams are being created.
	accepting bool
	need      int
	streams   []*i3SrvStream
	ready     chan struct{} // closed when every stream arrived
	done      chan struct{} // closed when the test is over
	ended     atomic.Bool

	// sockWarn holds what went wrong applying the client's socket
	// options (guarded by hub.mu); sockBufs the buffer sizes the kernel
	// reported for the first TCP stream.
	sockWarn []string
	sockBufs sockopt.Buffers
}

// i3SrvStream is one data stream of a server test.
type i3SrvStream struct {
	t      *i3Test
	id     int64
	send   bool // the server sends on it
	tcp    net.Conn
	uconn  udpio.Conn
	dst    netip.AddrPort
	urx    *i3UDPRecv
	c      stats.Counters
	tcpRes engine.TCPResult
	udpRes engine.UDPSendResult
	retr   i3Retr // TCP retransmissions, when we send
	seq    uint64 // TCP: the server's accept order
	err    error
	totals i3UDPTotals
}

func (st *i3SrvStream) counters() *stats.Counters {
	if st.urx != nil {
		return &st.urx.rx.C
	}
	return &st.c
}

// addStreamLocked adds a stream in the order the client connected them
// (TCP: accept order, st.seq; UDP: arrival order, as the datagrams are
// read one by one), and numbers every stream as the client does: with
// --bidir the first P streams are the client's sending ones. The cookies
// of TCP streams are read concurrently, so a later stream may be added
// first; ids and roles are settled before the test starts.
func (t *i3Test) addStreamLocked(st *i3SrvStream) {
	k := len(t.streams)
	for k > 0 && t.streams[k-1].seq > st.seq {
		k--
	}
	t.streams = slices.Insert(t.streams, k, st)
	p := t.p.StreamsPerDirection()
	for i, s := range t.streams {
		s.t, s.id = t, i3StreamID(i)
		s.send = t.p.Reverse || (t.p.Bidirectional && i >= p)
	}
	if t.udp && !st.send {
		st.urx = newI3UDPRecv(t.p.UDPCounters64Bit)
	}
	if len(t.streams) == t.need {
		t.accepting = false
		close(t.ready)
	}
}

// attachTCP makes c a data stream of t, or denies it, and holds it until
// the test is over.
func (t *i3Test) attachTCP(ctx context.Context, c net.Conn) {
	h := t.hub
	h.mu.Lock()
	ok := t.accepting && !t.udp
	h.mu.Unlock()
	// The client's socket options (TOS, window) go on before the stream
	// joins the test: the last stream to join starts the data, and with -R
	// a packet sent before them would leave with the default TOS.
	if ok {
		t.applySocket(c)
	}
	h.mu.Lock()
	ok = ok && t.accepting
	if ok {
		t.addStreamLocked(&i3SrvStream{tcp: c, seq: h.s.AcceptOrder(c)})
	}
	h.mu.Unlock()
	if !ok {
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.Write([]byte{i3wire.AccessDenied.Byte()})
		return
	}
	select {
	case <-t.done:
	case <-ctx.Done():
	}
}

// i3Refusal is a test refused after its parameters.
func (h *i3Hub) refusal(p *i3wire.Params) *i3wire.ServerErr {
	if err := p.Validate(); err != nil {
		var se *i3wire.ServerErr
		if errors.As(err, &se) {
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
	return nil
}

// ctrlMsg is one state read by the control reader, or its error.
type ctrlMsg struct {
	st  i3wire.State
	err error
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
	defer release()
	defer h.unregister(t)
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

// finish hands the test's result on.
func (sv *i3ServerTest) finish() {
	sv.reported = true
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
		who, err := h.cfg.Auth.authorize(t.cookie, p)
		if err != nil {
			_ = sv.refuse(ctx, &i3wire.ServerErr{IErrno: i3wire.ErrnoAuthTest})
			return fmt.Errorf("test authorization failed: %w", err)
		}
		h.s.Log("i3-auth", fmt.Sprintf("iperf3: %s: authenticated (%s)", t.peer, who))
	}
	if se := h.refusal(p); se != nil {
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

// runData moves the data until the client's TEST_END (or a failure), and
// fills sv.r; the test's clock started at start. It returns the control
// message that ended the data phase.
func (sv *i3ServerTest) runData(ctx context.Context, start time.Time, msgs chan ctrlMsg) (ctrlMsg, error) {
	t, h, p := sv.t, sv.t.hub, sv.t.p
	sv.start = start
	sv.r = sv.newResult()
	if sv.quiet = p.WB != nil && p.WB.Probe; sv.quiet {
		sv.id = h.s.QuietTest()
	} else {
		sv.id = h.s.NewTest(sv.r)
	}
	session.Hook("iperf3-test", t.peer)
	var recvC, sendC, allC []*stats.Counters
	var recvTCP []net.Conn
	var ids []int64
	for _, st := range t.streams {
		if st.send {
			sendC = append(sendC, st.counters())
		} else {
			recvC = append(recvC, st.counters())
			if st.tcp != nil {
				recvTCP = append(recvTCP, st.tcp)
			}
		}
		allC, ids = append(allC, st.counters()), append(ids, st.id)
	}
	// The client's -O: the first seconds are shown, marked, and left out
	// of the summary; the client runs them before its -t.
	omit := time.Duration(p.Omit) * time.Second
	onIv := h.s.Interval(sv.id)
	if sv.quiet {
		onIv = nil
	}
	iv := engine.NewIntervals(sv.start, h.s.Config().Interval, onIv, directionFlows(recvC, sendC, false)...)
	iv.SetOmit(omit)
	ivCtx, ivEnd := context.WithCancel(ctx) // ends the reports should this test panic before Stop
	defer ivEnd()
	backstop := h.s.Config().MaxDuration
	if p.Time > 0 {
		backstop = min(backstop, time.Duration(p.Time)*time.Second+omit)
	}
	backstop += 30 * time.Second
	per := engine.NewIntervals(sv.start, sv.wbPeriod(backstop), nil, i3Flows(ids, allC)...)
	per.SetOmit(omit)
	if p.Time > 0 && p.Num == 0 && p.BlockCount == 0 {
		// The last row is Stop's, at TEST_END: no row is printed at the
		// test's end while bytes are still counted.
		end := time.Duration(p.Time)*time.Second + omit
		iv.SetEnd(end)
		per.SetEnd(end)
	}
	iv.Run(ivCtx)
	per.Run(ivCtx)

	sctx, stopSend := context.WithCancel(ctx)
	defer stopSend()
	rctx, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	// The streams we send on share one payload: up to 128 streams of
	// 1 MiB blocks must not cost 128 MiB.
	var payload []byte
	if len(sendC) > 0 {
		payload = i3Payload(sv.blockLen())
	}
	var wg sync.WaitGroup
	for _, st := range t.streams {
		if st.send || st.tcp != nil {
			c := rctx
			if st.send {
				c = sctx
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := h.s.Catch(fmt.Sprintf("iperf3: stream %d of %s", st.id, t.peer), func() error {
					sv.stream(c, st, backstop, payload)
					return nil
				}); err != nil {
					st.err = err
				}
			}()
		}
	}
	var m ctrlMsg
	var err error
	limit := time.NewTimer(backstop)
	defer limit.Stop()
	check := time.NewTicker(time.Second)
	defer check.Stop()
wait:
	for {
		select {
		case m = <-msgs:
			if m.err != nil {
				err = fmt.Errorf("the control connection failed during the test: %w", m.err)
			}
			break wait
		case <-limit.C:
			err = sv.refuse(ctx, &i3wire.ServerErr{IErrno: i3wire.ErrnoServerExpired})
			break wait
		case now := <-check.C:
			if h.cfg.MaxRate > 0 && sv.rate(allC, now) > h.cfg.MaxRate {
				err = sv.refuse(ctx, &i3wire.ServerErr{IErrno: i3wire.ErrnoTotalRate})
				break wait
			}
		case <-ctx.Done():
			err = ctx.Err()
			break wait
		}
	}
	if err == nil && m.st != i3wire.TestEnd {
		err = sv.badMsg(m, "during the test")
	}
	stopSend()
	if err == nil {
		// What the client sent before TEST_END may still be on its way or
		// in our socket buffers: count it (iperf3's own server stops at
		// TEST_END and misses it).
		drain(ctx, recvC, recvTCP)
	}
	sv.end = time.Now()
	stopRecv()
	for _, st := range t.streams {
		if st.urx != nil {
			st.totals = st.urx.stop()
		}
	}
	// iperf3 closes the data connections at TEST_END.
	h.closeStreams(t)
	wg.Wait()
	sv.r.Intervals = iv.Stop(sv.end)
	sv.perIv = per.Stop(sv.end)
	sv.omitted = session.StreamOmits(iv, omit, ids, allC)
	sv.fill()
	session.ApplyOmit(sv.r, omit, sv.omitted, true)
	if err != nil {
		sv.r.Error = err.Error()
		sv.finish()
	}
	return m, err
}

// maxWBIntervals bounds the per-stream intervals one test keeps for the
// wirebench extension, all streams together (about 100 bytes each).
const maxWBIntervals = 200_000

// wbPeriod is the length of the per-stream intervals the client asked for
// (wb_interval_ms, at least 10 ms; 1 s when it asked none), made longer
// when the test could run long enough, with as many streams as it has, to
// keep more than maxWBIntervals: the client's number must not decide how
// much memory the server holds. A lengthened period is a warning.
func (sv *i3ServerTest) wbPeriod(longest time.Duration) time.Duration {
	p := sv.t.p
	period := time.Second
	if p.WB != nil && p.WB.IntervalMs > 0 {
		period = 10 * time.Millisecond
		if p.WB.IntervalMs < int64(time.Hour/time.Millisecond) {
			period = max(time.Duration(p.WB.IntervalMs)*time.Millisecond, period)
		} else {
			period = time.Hour
		}
	}
	floor := longest * time.Duration(len(sv.t.streams)) / maxWBIntervals
	if period < floor {
		if p.WB != nil {
			sv.r.Warn(fmt.Sprintf("this test can run %v with %d streams: its per-stream intervals are %v long instead of %v, to keep at most %d in all",
				longest.Round(time.Second), len(sv.t.streams), floor.Round(time.Millisecond), period, maxWBIntervals))
		}
		period = floor
	}
	return period
}

// drain waits until the receive counters stop moving (20 ms without
// change) while no received byte waits unread in the TCP streams' sockets
// (a reader descheduled on a busy machine leaves them there), at most one
// second.
func drain(ctx context.Context, cs []*stats.Counters, tcp []net.Conn) {
	if len(cs) == 0 {
		return
	}
	sum := func() (b int64) {
		for _, c := range cs {
			b += c.Bytes.Load()
		}
		return b
	}
	queued := func() bool {
		for _, c := range tcp {
			if session.QueuedBytes(c) > 0 {
				return true
			}
		}
		return false
	}
	prev := sum()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i < 50; i++ {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		now := sum()
		if now == prev && !queued() {
			return
		}
		prev = now
	}
}

// rate is the test's average rate so far, both directions together.
func (sv *i3ServerTest) rate(cs []*stats.Counters, now time.Time) float64 {
	var b int64
	for _, c := range cs {
		b += c.Bytes.Load()
	}
	return float64(b) * 8 / now.Sub(sv.start).Seconds()
}

// blockLen is the test's block (TCP) or datagram (UDP) length.
func (sv *i3ServerTest) blockLen() int {
	if n := int(sv.t.p.Len); n > 0 {
		return n
	}
	if sv.t.udp {
		return i3DefaultUDP
	}
	return session.DefaultTCPLength
}

// stream runs one TCP stream, or one UDP stream the server sends on (UDP
// receiving happens in the demultiplexer).
func (sv *i3ServerTest) stream(ctx context.Context, st *i3SrvStream, backstop time.Duration, payload []byte) {
	p := sv.t.p
	length := sv.blockLen()
	var per int64
	if n := int64(p.StreamsPerDirection()); p.Num > 0 {
		per = p.Num / n // rounded up, without overflowing near MaxInt64
		if p.Num%n != 0 {
			per++
		}
	}
	switch {
	case st.uconn != nil:
		pps := 0.0
		if p.Bandwidth > 0 {
			pps = float64(p.Bandwidth) / float64(length*8)
		}
		st.udpRes, st.err = engine.SendUDP(ctx, st.uconn, engine.UDPSendConfig{Template: payload, Stamp: i3Stamp(p.UDPCounters64Bit),
			PPS: pps, Duration: backstop, Bytes: per, FirstID: 1, Dst: st.dst, Batch: session.ServerSendBatch(length)}, &st.c)
	case st.send:
		st.tcpRes, st.err = session.SendTCP(ctx, st.tcp, p.ZeroCopy, engine.TCPSendConfig{Buffer: payload, Duration: backstop, Bytes: per}, &st.c)
	default:
		st.tcpRes, st.err = engine.ReceiveTCP(ctx, st.tcp, max(length, 128*1024), 0, nil, &st.c)
	}
	if ctx.Err() != nil {
		st.err = nil // ended by TEST_END
	}
}

func (sv *i3ServerTest) newResult() *result.Result {
	t, p := sv.t, sv.t.p
	proto := result.TCP
	if t.udp {
		proto = result.UDP
	}
	r := session.NewServerResult(proto, session.DialectIperf3, t.peer, sv.ctrl.LocalAddr().(*net.TCPAddr).Port)
	r.Version = session.VersionString()
	r.StartedAt = sv.start.UTC()
	r.Test.PeerVersion = p.ClientVersion
	t.recordSocket(r)
	if p.WB != nil && p.WB.Agent != "" {
		r.Test.PeerVersion = p.WB.Agent
	}
	r.Test.Duration, r.Test.Bytes = float64(p.Time), p.Num
	r.Test.Length, r.Test.Streams = int(p.Len), p.StreamsPerDirection()
	if t.udp && p.Bandwidth > 0 && p.Len > 0 {
		r.Test.RateBPS = float64(p.Bandwidth) * float64(p.StreamsPerDirection())
		r.Test.RatePPS = r.Test.RateBPS / float64(p.Len*8)
	}
	switch {
	case p.Reverse:
		r.Test.Direction, r.Test.Mode = result.DirSend, "reverse"
	case p.Bidirectional:
		r.Test.Direction, r.Test.Mode = result.DirBidir, "bidir"
	}
	return r
}

// fill puts our own counts into the result.
func (sv *i3ServerTest) fill() {
	r, udp := sv.r, sv.t.udp
	var snd result.Sender
	var rcv result.Receiver
	var nSend, nRecv int
	for _, st := range sv.t.streams {
		rs := result.Stream{ID: int(st.id)}
		if st.send {
			nSend++
			sd := &result.Sender{Bytes: st.tcpRes.Bytes, Seconds: st.tcpRes.End.Sub(st.tcpRes.Start).Seconds()}
			if st.uconn != nil {
				sd = &result.Sender{Bytes: st.udpRes.Bytes, Packets: st.udpRes.Packets, SendErrors: st.udpRes.Errors,
					Seconds: st.udpRes.End.Sub(st.udpRes.Start).Seconds()}
			}
			session.RateOf(sd)
			snd.Bytes += sd.Bytes
			snd.Packets += sd.Packets
			snd.SendErrors += sd.SendErrors
			snd.Seconds = max(snd.Seconds, sd.Seconds)
			rs.Sender = sd
			if sv.t.p.Bidirectional {
				rs.Flow = "reverse"
			}
		} else {
			nRecv++
			var rr *result.Receiver
			if st.urx != nil {
				rr = i3LocalReceiver(st.totals, sv.start, sv.end, st.uconn)
			} else {
				rr = &result.Receiver{Bytes: st.tcpRes.Bytes, Seconds: sv.end.Sub(sv.start).Seconds(), Source: "local"}
				i3Rates(rr, false)
			}
			session.SumReceiver(&rcv, rr)
			rs.Receiver = rr
		}
		if st.err != nil && r.Error == "" {
			r.Error = fmt.Sprintf("stream %d: %v", st.id, st.err)
		}
		if len(sv.t.streams) > 1 {
			r.Streams = append(r.Streams, rs)
		}
	}
	session.RateOf(&snd)
	if !udp {
		snd.PacketsPerSecond, rcv.PacketsPerSecond = 0, 0
	}
	if nRecv > 0 {
		r.Receiver = &rcv
	}
	if nSend > 0 {
		if nRecv > 0 {
			r.Reverse = &result.Flow{Direction: result.DirSend, Sender: &snd}
		} else {
			r.Sender = &snd
		}
	}
}

// ourResults is the server's results JSON.
func (sv *i3ServerTest) ourResults() *i3wire.Results {
	p := sv.t.p
	res := &i3wire.Results{}
	res.CPUUtilTotal, res.CPUUtilUser, res.CPUUtilSystem = sv.t.hub.s.CPUSoFar(sv.id)
	endT := sv.end.Sub(sv.start).Seconds()
	var send []bool
	var retr []i3Retr
	for _, st := range sv.t.streams {
		send, retr = append(send, st.send), append(retr, st.retr)
		sr := i3wire.StreamResult{ID: st.id, EndTime: endT}
		switch {
		case st.uconn != nil:
			sr.Bytes, sr.Packets = st.udpRes.Bytes, st.udpRes.Packets
		case st.send:
			sr.Bytes = st.tcpRes.Bytes
		case st.urx != nil:
			tt := st.totals
			sr.Bytes, sr.Packets, sr.Errors, sr.Jitter = tt.bytes, tt.maxSeq, tt.lost, tt.jitter.Seconds()
		default:
			sr.Bytes = st.tcpRes.Bytes
		}
		res.Streams = append(res.Streams, sr)
	}
	i3SetRetrans(res, sv.t.udp, send, retr)
	omitStreamResults(res, sv.omitted, time.Duration(p.Omit)*time.Second)
	if p.WB != nil {
		wb := &i3wire.WBResults{Version: i3wire.WBVersion, Agent: "wirebench/" + session.VersionString()}
		ivs := i3WBIntervals(sv.perIv)
		for _, st := range sv.t.streams {
			if st.send {
				continue
			}
			ws := i3wire.WBStream{ID: st.id, Intervals: ivs[st.id]}
			if st.urx != nil {
				ws.Duplicates, ws.OutOfOrder = st.totals.dups, st.totals.ooo
			}
			wb.Streams = append(wb.Streams, ws)
		}
		res.WB = wb
	}
	if p.GetServerOutput {
		res.ServerOutputText = sv.text()
	}
	return res
}

// text renders the test as the server's human report.
func (sv *i3ServerTest) text() string {
	var b bytes.Buffer
	tx := report.NewText(&b, "1")
	tx.Header(sv.r.Test, "server", "", sv.r.Test.Peer)
	for _, in := range sv.r.Intervals {
		tx.Interval("1", in, sv.t.udp, in.Flow != "reverse" && !sv.t.p.Reverse)
	}
	tx.Summary(sv.r)
	return b.String()
}

// exchange runs EXCHANGE_RESULTS to IPERF_DONE and reports the result.
func (sv *i3ServerTest) exchange(ctx context.Context) error {
	fail := func(err error) error { return fail(sv, err) }
	if err := sv.send(ctx, i3wire.ExchangeResults); err != nil {
		return fail(err)
	}
	sctx, cancel := step(ctx)
	defer cancel()
	peer, err := sv.conn.ReadResults(sctx)
	if err != nil {
		_ = sv.refuse(ctx, &i3wire.ServerErr{IErrno: i3wire.ErrnoRecvResults})
		return fail(fmt.Errorf("reading the client's results: %w", err))
	}
	sv.peerCounts(peer)
	sv.r.CPU = &result.CPU{Remote: &result.RemoteCPU{Percent: peer.CPUUtilTotal, UserPercent: peer.CPUUtilUser,
		SystemPercent: peer.CPUUtilSystem}}
	if err := sv.conn.WriteResults(sctx, sv.ourResults()); err != nil {
		return fail(fmt.Errorf("sending our results: %w", err))
	}
	if err := sv.send(ctx, i3wire.DisplayResults); err != nil {
		return fail(err)
	}
	st, err := sv.conn.ReadState(sctx)
	if err == nil {
		err = sv.m.Recv(st)
	}
	if err == nil && st != i3wire.IperfDone {
		err = fmt.Errorf("the client sent %v instead of IPERF_DONE", st)
	}
	if err != nil {
		sv.r.Warn("the client did not end the conversation cleanly: " + err.Error())
	}
	sv.finish()
	return nil
}

// peerCounts takes the receive counts of the streams we sent on from the
// client's results.
func (sv *i3ServerTest) peerCounts(peer *i3wire.Results) {
	var ids []int64
	for _, st := range sv.t.streams {
		if st.send {
			ids = append(ids, st.id)
		}
	}
	if len(ids) == 0 {
		return
	}
	sum, per, lossWhole, err := i3PeerReceiver(peer, ids, sv.t.udp, time.Duration(sv.t.p.Omit)*time.Second, sv.omitted)
	if lossWhole {
		sv.r.Warn(session.OmitLossWarning)
	}
	if err != nil {
		sv.r.Warn("the client's results do not match our streams: " + err.Error())
		return
	}
	for i, id := range ids {
		for k := range sv.r.Streams {
			if st := &sv.r.Streams[k]; int64(st.ID) == id {
				st.Receiver = per[i]
			}
		}
	}
	if sv.r.Reverse != nil {
		sv.r.Reverse.Receiver = sum
	} else {
		sv.r.Receiver = sum
	}
}

// i3Demux routes the datagrams of one UDP socket to iperf3 streams by
// source address.
type i3Demux struct {
	hub  *i3Hub
	conn udpio.Conn // writes must be safe with a concurrent reader and senders

	mu      sync.Mutex
	streams map[netip.AddrPort]*i3SrvStream
}

// match reports whether a new source's first datagram is an iperf3 UDP
// connect message for a test waiting for streams from its address.
func (d *i3Demux) match(b []byte) bool {
	return len(b) == 4 && i3wire.IsUDPConnectMsg(b)
}

// datagram handles one datagram. A connect message that opens a stream is
// answered here, on d.conn, before the stream is added (so never after the
// test's data); the return value is always nil.
func (d *i3Demux) datagram(src netip.AddrPort, b []byte, at time.Time) []byte {
	d.mu.Lock()
	st := d.streams[src]
	d.mu.Unlock()
	if st != nil && !st.t.ended.Load() {
		if st.urx != nil {
			st.urx.feed(b, at)
		}
		return nil
	}
	if len(b) != 4 || !i3wire.IsUDPConnectMsg(b) {
		return nil
	}
	h := d.hub
	h.mu.Lock()
	t := h.pendingUDPLocked(src.Addr())
	if t != nil {
		// Reply before the stream counts: adding the last stream starts
		// the test, and a 3.12 client that reads one of our data
		// datagrams where it waits for this reply gives up ("unable to
		// read from stream socket"; seen in 3 of 30 UDP --bidir runs).
		if _, err := d.conn.WriteBatch([]udpio.Message{{Buf: []byte(i3wire.UDPConnectReply), Addr: src}}); err != nil {
			h.s.Log("i3-reply", fmt.Sprintf("iperf3: udp connect reply to %s: %v", src, err))
		}
		st = &i3SrvStream{uconn: d.conn, dst: src}
		t.addStreamLocked(st)
		if !st.send {
			st.uconn = nil
		}
	}
	h.mu.Unlock()
	if t == nil {
		h.s.Log("i3-udp", fmt.Sprintf("iperf3: ignored a udp connect from %s: no test from that address waits for streams", src))
		return nil
	}
	d.mu.Lock()
	d.streams[src] = st
	d.mu.Unlock()
	return nil
}

// done reports whether src's stream has ended, and forgets it then.
func (d *i3Demux) done(src netip.AddrPort) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.streams[src]
	if st == nil || st.t.ended.Load() {
		delete(d.streams, src)
		return true
	}
	return false
}

// serve reads iperf3's own UDP socket.
func (d *i3Demux) serve(ctx context.Context) {
	sweep := func(time.Time) bool {
		d.mu.Lock()
		for src, st := range d.streams {
			if st.t.ended.Load() {
				delete(d.streams, src)
			}
		}
		d.mu.Unlock()
		return true
	}
	err := engine.ReceiveUDP(ctx, d.conn, engine.UDPReceiveConfig{Batch: 64, Tick: session.SweepEvery, OnTick: sweep}, func(m *udpio.Message) bool {
		defer func() {
			// The name is built only on a panic: not per datagram.
			if v := recover(); v != nil {
				d.hub.s.LogPanic("iperf3: udp from "+m.Addr.String(), v)
			}
		}()
		if reply := d.datagram(m.Addr, m.Buf[:m.N], m.Time); reply != nil {
			if _, err := d.conn.WriteBatch([]udpio.Message{{Buf: reply, Addr: m.Addr}}); err != nil {
				d.hub.s.Log("i3-reply", fmt.Sprintf("iperf3: udp connect reply to %s: %v", m.Addr, err))
			}
		}
		return true
	})
	if err != nil && ctx.Err() == nil {
		d.hub.s.Log("i3-udp-read", fmt.Sprintf("iperf3: reading the udp socket: %v", err))
	}
}
