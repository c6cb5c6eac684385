package iperf3

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/cpuuse"
	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
	"github.com/wirebench/wirebench/internal/version"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// i3ClientStream is one data stream of our iperf3 client.
type i3ClientStream struct {
	id     int64
	send   bool // we send on it (else we receive)
	tcp    net.Conn
	udp    udpio.Conn
	c      stats.Counters
	urx    *i3UDPRecv
	tcpRes engine.TCPResult
	tcpDel engine.TCPDelivery // what the peer acknowledged of tcpRes (sending)
	udpRes engine.UDPSendResult
	retr   i3Retr // TCP retransmissions, when we send
	err    error
	totals i3UDPTotals
}

func (s *i3ClientStream) close() {
	if s.tcp != nil {
		s.tcp.Close()
	}
	if s.udp != nil {
		s.udp.Close()
	}
}

// i3Client is one test of our iperf3 client.
type i3Client struct {
	cpu0    cpuuse.Sample // the process's CPU time when the test began
	cfg     *session.ClientConfig
	r       *result.Result
	ctrl    net.Conn
	conn    *i3wire.Conn
	m       *i3wire.Machine
	mMu     sync.Mutex // guards m while the control reader runs
	cookie  i3wire.Cookie
	params  *i3wire.Params
	streams []*i3ClientStream
	start   time.Time
	end     time.Time
	// started is when TEST_START arrived: the server sends TEST_RUNNING
	// and then data straight after it, so no byte of a download can
	// arrive before; the test's clock starts there.
	started time.Time
	// hold holds the TCP receivers while TEST_END goes out (see run).
	hold    engine.Hold
	peer    *i3wire.Results
	perIv   []result.Interval
	omitted map[string]result.Interval // -O: each stream's counts in the omitted period, by id
	sent    *i3wire.Results
}

// Prepare applies iperf3's defaults to a client config and checks it the
// way RunClient will (errors are session.ConfigError); the returned config
// is what would run.
func Prepare(cfg session.ClientConfig) (session.ClientConfig, error) {
	i3ClientDefaults(&cfg)
	if err := i3ClientValidate(&cfg); err != nil {
		return cfg, session.ConfigError{Err: err}
	}
	return cfg, nil
}

// i3ClientDefaults applies iperf3's defaults to a client config.
func i3ClientDefaults(c *session.ClientConfig) {
	c.Defaults(session.DefaultIperf3Port, i3DefaultUDP, i3DefaultRate)
}

// i3ClientValidate checks an iperf3 client config after defaults.
func i3ClientValidate(c *session.ClientConfig) error {
	switch {
	case c.Host == "":
		return errors.New("no host given")
	case c.Port < 1 || c.Port > 65535:
		return fmt.Errorf("invalid port %d: want 1-65535", c.Port)
	case c.Parallel < 1 || c.Parallel > i3StreamsLimit:
		return fmt.Errorf("parallel streams %d out of range 1-%d", c.Parallel, i3StreamsLimit)
	case c.Duration < 0 || c.Bytes < 0:
		return errors.New("duration and byte count must not be negative")
	case c.Duration > i3wire.MaxTime*time.Second:
		return fmt.Errorf("duration above iperf3's limit of %d s", i3wire.MaxTime)
	case session.ValidateOmit(c.Omit, c.Bytes) != nil:
		return session.ValidateOmit(c.Omit, c.Bytes)
	case c.Reverse && c.Bidir:
		return errors.New("choose one of -R and --bidir")
	case c.FullDuplex || c.Tradeoff || c.Dual:
		return errors.New("--full-duplex, -r and -d are iperf2 modes; iperf3 has -R and --bidir")
	}
	if err := c.Auth.Validate(); err != nil {
		return err
	}
	if c.UDP {
		min := i3wire.UDPHeaderSize(c.UDPCounters64Bit)
		if c.Length < min || c.Length > i3wire.MaxUDPBlockSize {
			return fmt.Errorf("UDP length %d out of range %d-%d for iperf3", c.Length, min, i3wire.MaxUDPBlockSize)
		}
	} else if c.Length < 1 || c.Length > i3wire.MaxBlockSize {
		return fmt.Errorf("TCP length %d out of range 1 byte to %d for iperf3", c.Length, i3wire.MaxBlockSize)
	}
	return c.ValidateSockets()
}

// Run is RunClient without the -J document: the dialect table's runner.
func Run(ctx context.Context, cfg session.ClientConfig) (*result.Result, error) {
	r, _, err := RunClient(ctx, cfg)
	return r, err
}

// RunClient runs one iperf3 client test (cfg.Dialect is taken as
// iperf3) and also returns the test as iperf3's -J document. Errors follow
// RunClient: an error when the test could not start (including a server's
// refusal), else a result with Error set when it failed midway.
func RunClient(ctx context.Context, cfg session.ClientConfig) (*result.Result, *i3wire.Report, error) {
	cfg.Dialect = session.DialectIperf3
	cfg, err := Prepare(cfg)
	if err != nil {
		return nil, nil, err
	}
	// The omitted seconds come first, then the test asked for, as
	// iperf3's client runs it.
	cfg.Duration += cfg.Omit
	cl := &i3Client{cfg: &cfg, m: i3wire.NewMachine(i3wire.RoleClient)}
	cl.r = cl.newResult()
	defer cl.close()
	cl.cpu0 = cpuuse.Now()
	if err := cl.setUp(ctx); err != nil {
		return nil, nil, err
	}
	cl.run(ctx)
	if cl.peer != nil {
		cl.r.CPU = &result.CPU{Remote: &result.RemoteCPU{Percent: cl.peer.CPUUtilTotal,
			UserPercent: cl.peer.CPUUtilUser, SystemPercent: cl.peer.CPUUtilSystem}}
	}
	session.FillCPU(cl.r, cl.cpu0)
	return cl.r, cl.report(), nil
}

func (cl *i3Client) newResult() *result.Result {
	cfg := cl.cfg
	r := result.New("client")
	r.Version = version.String()
	r.Test = result.Test{Protocol: result.TCP, Direction: result.DirSend, Dialect: session.DialectIperf3, Host: cfg.Host, Port: cfg.Port,
		Duration: (cfg.Duration - cfg.Omit).Seconds(), Bytes: cfg.Bytes, Length: cfg.Length, Streams: cfg.Parallel}
	switch {
	case cfg.Reverse:
		r.Test.Direction, r.Test.Mode = result.DirReceive, "reverse"
	case cfg.Bidir:
		r.Test.Direction, r.Test.Mode = result.DirBidir, "bidir"
	}
	if cfg.Bytes > 0 {
		r.Test.Duration = 0
	}
	if cfg.UDP {
		r.Test.Protocol = result.UDP
		r.Test.RatePPS = cfg.PPS()
		r.Test.RateBPS = cfg.PPS() * float64(cfg.Length*8)
	}
	return r
}

func (cl *i3Client) close() {
	for _, s := range cl.streams {
		s.close()
	}
	if cl.ctrl != nil {
		cl.ctrl.Close()
	}
}

// step bounds one control step.
func step(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, i3StepTimeout)
}

// buildParams is what we ask of the server.
func (cl *i3Client) buildParams() *i3wire.Params {
	cfg := cl.cfg
	p := &i3wire.Params{Protocol: i3wire.ProtoTCP, Parallel: int64(cfg.Parallel), Reverse: cfg.Reverse, Bidirectional: cfg.Bidir,
		Len: int64(cfg.Length), PacingTimer: 1000, UDPCounters64Bit: cfg.UDP && cfg.UDPCounters64Bit,
		WB: &i3wire.WBParams{Version: i3wire.WBVersion, Agent: "wirebench/" + version.String(), Duplicates: true,
			IntervalMs: max(cfg.Interval.Milliseconds(), 0)}}
	// The peer applies these to its end of each stream, as iperf3 does.
	so := cfg.SocketOptions()
	p.MSS, p.Window, p.NoDelay, p.Congestion = int64(so.MSS), int64(so.Buffer), so.NoDelay, so.Congestion
	p.ZeroCopy = cfg.ZeroCopy
	if so.SetTOS {
		p.TOS = int64(so.TOS)
	}
	if cfg.Bytes > 0 {
		p.Num = cfg.Bytes
	} else {
		p.Time = int64(math.Ceil((cfg.Duration - cfg.Omit).Seconds()))
		p.Omit = int64(cfg.Omit / time.Second)
	}
	if cfg.UDP {
		p.Protocol = i3wire.ProtoUDP
		p.Bandwidth = int64(cfg.PPS() * float64(cfg.Length*8) / float64(cfg.Parallel))
	}
	return p
}

// setUp runs the conversation up to TEST_RUNNING: cookie, parameters,
// streams. Any failure here means the test did not start.
func (cl *i3Client) setUp(ctx context.Context) error {
	cfg := cl.cfg
	d := net.Dialer{}
	if cfg.BindHost != "" {
		a, err := net.ResolveTCPAddr(cfg.Network(false), net.JoinHostPort(cfg.BindHost, "0"))
		if err != nil {
			return fmt.Errorf("resolving the bind address %q: %w", cfg.BindHost, err)
		}
		d.LocalAddr = a
	}
	c, err := d.DialContext(ctx, cfg.Network(false), cfg.Addr())
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", cfg.Addr(), err)
	}
	cl.ctrl = c
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	cl.r.Test.Peer = c.RemoteAddr().String()
	cfg.Connected(c.LocalAddr(), cl.r.Test.Peer)
	cl.conn = i3wire.NewConn(c)
	if cl.cookie, err = i3wire.NewCookie(nil); err != nil {
		return fmt.Errorf("making a cookie: %w", err)
	}
	sctx, cancel := step(ctx)
	defer cancel()
	if err := cl.conn.WriteCookie(sctx, cl.cookie); err != nil {
		return fmt.Errorf("sending the iperf3 cookie: %w", err)
	}
	if err := cl.expect(sctx, i3wire.ParamExchange); err != nil {
		return err
	}
	cl.params = cl.buildParams()
	if err := cfg.Auth.Apply(cl.params, cl.cookie, time.Now()); err != nil {
		return session.ConfigError{Err: err}
	}
	if err := cl.conn.WriteParams(sctx, cl.params); err != nil {
		return fmt.Errorf("sending the iperf3 parameters: %w", err)
	}
	if err := cl.expect(sctx, i3wire.CreateStreams); err != nil {
		return err
	}
	if err := cl.openStreams(sctx); err != nil {
		return err
	}
	if err := cl.expect(sctx, i3wire.TestStart); err != nil {
		return err
	}
	cl.started = time.Now()
	return cl.expect(sctx, i3wire.TestRunning)
}

// ErrBusy is the error of a test an iperf3 server refused because it
// was still running another (ACCESS_DENIED): a real iperf3 server takes a
// moment after a test ends before it accepts the next.
var ErrBusy = errors.New("the iperf3 server is busy running a test (access denied)")

// expect reads the next state and checks it is want; a SERVER_ERROR or
// ACCESS_DENIED becomes the error.
func (cl *i3Client) expect(ctx context.Context, want i3wire.State) error {
	st, err := cl.readState(ctx)
	if err != nil {
		return err
	}
	if st != want {
		return fmt.Errorf("iperf3 server sent %v, want %v", st, want)
	}
	return nil
}

// readState reads and validates one state byte, turning error states into
// errors.
func (cl *i3Client) readState(ctx context.Context) (i3wire.State, error) {
	st, err := cl.conn.ReadState(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading the iperf3 control connection: %w", err)
	}
	cl.mMu.Lock()
	err = cl.m.Recv(st)
	cl.mMu.Unlock()
	if err != nil {
		return st, fmt.Errorf("iperf3 server: %w", err)
	}
	switch st {
	case i3wire.AccessDenied:
		return st, ErrBusy
	case i3wire.ServerError:
		se, err := cl.conn.ReadServerErr(ctx)
		if err != nil {
			return st, fmt.Errorf("the iperf3 server reported an error, then: %w", err)
		}
		return st, fmt.Errorf("the iperf3 server refused: %w", se)
	case i3wire.ServerTerminate:
		return st, errors.New("the iperf3 server was terminated")
	}
	return st, nil
}

// openStreams opens the data streams in iperf3's order: with --bidir our
// sending streams first.
func (cl *i3Client) openStreams(ctx context.Context) error {
	cfg := cl.cfg
	n := cfg.Parallel
	if cfg.Bidir {
		n *= 2
	}
	for k := 0; k < n; k++ {
		s := &i3ClientStream{id: i3StreamID(k), send: !cfg.Reverse && (!cfg.Bidir || k < cfg.Parallel)}
		cl.streams = append(cl.streams, s)
		var err error
		if cfg.UDP {
			err = cl.openUDP(ctx, s)
		} else {
			err = cl.openTCP(ctx, s)
		}
		if err != nil {
			return fmt.Errorf("opening iperf3 stream %d: %w", s.id, err)
		}
	}
	return nil
}

func (cl *i3Client) openTCP(ctx context.Context, s *i3ClientStream) error {
	c, err := cl.cfg.DialTCP(ctx, len(cl.streams)-1)
	if err != nil {
		return err
	}
	s.tcp = c
	if len(cl.streams) == 1 {
		cl.cfg.RecordSocket(cl.r, c, nil)
	}
	return i3wire.NewConn(c).WriteCookie(ctx, cl.cookie)
}

// openUDP runs the UDP connect handshake: "9876" out, any known reply form
// back (data datagrams that overtake the reply in reverse mode are skipped).
func (cl *i3Client) openUDP(ctx context.Context, s *i3ClientStream) error {
	c, err := cl.cfg.DialUDP(ctx, len(cl.streams)-1)
	if err != nil {
		return err
	}
	s.udp = c
	if len(cl.streams) == 1 {
		caps := c.Capabilities()
		cl.cfg.RecordSocket(cl.r, nil, &caps)
	}
	if !s.send {
		s.urx = newI3UDPRecv(cl.cfg.UDPCounters64Bit)
	}
	if _, err := c.WriteBatch([]udpio.Message{{Buf: []byte(i3wire.UDPConnectMsg)}}); err != nil {
		return fmt.Errorf("sending the udp connect message: %w", err)
	}
	dl, _ := ctx.Deadline()
	_ = c.SetReadDeadline(dl)
	defer c.SetReadDeadline(time.Time{})
	msgs := []udpio.Message{{Buf: make([]byte, 65536)}}
	for skipped := 0; skipped < 64; skipped++ {
		if _, err := c.ReadBatch(msgs); err != nil {
			return fmt.Errorf("waiting for the udp connect reply: %w", err)
		}
		if msgs[0].N == 4 && i3wire.ClassifyUDPReply(msgs[0].Buf[:4]) != i3wire.UDPReplyInvalid {
			return nil
		}
		if s.urx != nil {
			s.urx.feed(msgs[0].Buf[:msgs[0].N], msgs[0].Time)
		}
	}
	return errors.New("no udp connect reply among the first datagrams")
}

// run moves the data, ends the test and exchanges results. Failures are
// recorded in the result.
func (cl *i3Client) run(ctx context.Context) {
	cfg := cl.cfg
	cl.start = cl.started
	if cl.start.IsZero() {
		cl.start = time.Now()
	}
	cl.r.StartedAt = cl.start.UTC()
	var sendC, recvC, allC []*stats.Counters
	var ids []int64
	for _, s := range cl.streams {
		if s.send {
			sendC = append(sendC, &s.c)
		} else if s.urx != nil {
			recvC = append(recvC, &s.urx.rx.C)
		} else {
			recvC = append(recvC, &s.c)
		}
		ids = append(ids, s.id)
		allC = append(allC, cl.counters(s))
	}
	flows := directionFlows(sendC, recvC, true)
	perFlows := i3Flows(ids, allC)
	for k, s := range cl.streams {
		if s.send && s.tcp != nil {
			// TCP_INFO per interval: retransmits, cwnd, RTT.
			flows[0].TCP = append(flows[0].TCP, s.tcp)
			perFlows[k].TCP = []net.Conn{s.tcp}
		}
	}
	iv := engine.NewIntervals(cl.start, cfg.Interval, cfg.OnInterval, flows...)
	iv.SetOmit(cfg.Omit)
	perPeriod := cfg.Interval
	if perPeriod == 0 {
		perPeriod = time.Second
	}
	per := engine.NewIntervals(cl.start, perPeriod, nil, perFlows...)
	per.SetOmit(cfg.Omit)
	if cfg.Duration > 0 && cfg.Bytes == 0 {
		// The last row is Stop's, at the test's end (TEST_END): no row
		// is printed at the end while bytes are still counted.
		iv.SetEnd(cfg.Duration)
		per.SetEnd(cfg.Duration)
	}
	iv.Run(ctx)
	per.Run(ctx)

	// An interrupt (ctx done) ends the sending; the test still ends the
	// proper way on wrap, which ctx does not cancel: TEST_END, the results
	// exchange, each step bounded by i3StepTimeout.
	wrap := context.WithoutCancel(ctx)

	// The control connection is read by one goroutine from now on.
	ctrlMsg := make(chan error, 1)
	go func() {
		st, err := cl.readState(ctx)
		if err != nil && ctx.Err() != nil {
			// The interrupt cut the read short, not the server (a read
			// cut short consumed nothing): read on, on wrap.
			st, err = cl.readState(wrap)
		}
		if err == nil && st != i3wire.ExchangeResults {
			err = fmt.Errorf("iperf3 server sent %v during the test", st)
		}
		ctrlMsg <- err
	}()

	var drops *session.SendPathDrops // a UDP test we send (its Receiver is the server's count of it)
	for _, s := range cl.streams {
		if s.send && s.udp != nil && drops == nil && !cfg.Bidir {
			drops = session.WatchSendPathDrops(s.udp.RemoteAddr().Addr())
		}
	}

	rctx, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	sctx, stopSend := context.WithCancel(ctx)
	defer stopSend()
	// writing counts the senders still writing: TEST_END follows the
	// last write at once. A TCP sender's brief wait for acknowledgements
	// runs beside TEST_END (sendWG counts it), not before it: the
	// server's clock runs until it reads TEST_END.
	var writing, sendWG, recvWG sync.WaitGroup
	for _, s := range cl.streams {
		if s.send {
			sendWG.Add(1)
			writing.Add(1)
			wrote := sync.OnceFunc(writing.Done)
			go func() { defer sendWG.Done(); defer wrote(); cl.sendStream(sctx, s, wrote) }()
		} else {
			recvWG.Add(1)
			go func() { defer recvWG.Done(); cl.recvStream(rctx, s) }()
		}
	}
	// From the test's end until TEST_END is out, our TCP receivers hold
	// their reads (-R, --bidir): an iperf3 server sending to us is busy
	// for as long as we read, and on a loaded host a busy process waits
	// its turn for a CPU before it reads TEST_END and stops its clock;
	// with our window full its writes find no room, and TEST_END finds
	// it with less to do. What it sent meanwhile waits in our socket
	// buffer and is read and counted after TEST_END.
	if cfg.Duration > 0 && cfg.Bytes == 0 {
		holdAt := time.AfterFunc(time.Until(cl.start.Add(cfg.Duration)), cl.hold.Pause)
		defer holdAt.Stop()
	}
	defer cl.hold.Resume()
	ended := make(chan struct{})
	go func() { cl.waitEnd(sctx, &writing); close(ended) }()
	var ctrlErr error
	early, ctrlRead := false, false // ctrlRead: the reader's one message is taken
	select {
	case <-ended: // also after an interrupt: the senders stopped on sctx
	case ctrlErr = <-ctrlMsg:
		early, ctrlRead = true, true
		stopSend()
	}
	cl.hold.Pause()
	<-ended
	cl.end = time.Now()
	if !early {
		// The state machine moves first: the server's EXCHANGE_RESULTS
		// may be read before WriteState returns.
		cl.mMu.Lock()
		err := cl.m.Send(i3wire.TestEnd)
		cl.mMu.Unlock()
		if err == nil {
			wctx, cancel := step(wrap)
			err = cl.conn.WriteState(wctx, i3wire.TestEnd)
			cancel()
		}
		cl.hold.Resume()
		sendWG.Wait() // the acknowledgement waits, brief
		if err != nil {
			ctrlErr = fmt.Errorf("sending TEST_END: %w", err)
		} else {
			select {
			case ctrlErr = <-ctrlMsg:
				ctrlRead = true
			case <-time.After(i3StepTimeout):
				ctrlErr = errors.New("the iperf3 server did not answer TEST_END")
			}
		}
	}
	stopSend()
	sendWG.Wait()
	var local session.LocalDrops
	if drops != nil {
		local = drops.Done()
	}
	stopRecv()
	recvWG.Wait()
	for _, s := range cl.streams {
		if s.urx != nil {
			s.totals = s.urx.stop()
		}
	}
	// The intervals end where the summary does, at TEST_END; what was
	// read after it (sent before it) is in the last row.
	cl.r.Intervals = iv.Stop(cl.end)
	cl.perIv = per.Stop(cl.end)
	cl.omitted = session.StreamOmits(iv, cfg.Omit, ids, allC)
	if ctrlErr == nil {
		ctrlErr = cl.exchange(wrap)
	} else {
		cl.ctrl.Close() // unblocks the reader goroutine
		if !ctrlRead {
			// The server's own error, read before we closed, is the
			// cause of whatever failed on our side (a stream it reset,
			// a TEST_END our state machine no longer allowed).
			var se *i3wire.ServerErr
			if m := <-ctrlMsg; errors.As(m, &se) {
				ctrlErr = m
			}
		}
	}
	cl.fill()
	session.ApplyOmit(cl.r, cfg.Omit, cl.omitted, true)
	warnPeerShort(cl.r, cfg.UDP)
	if drops != nil {
		local.Apply(cl.r, len(cl.streams) > 0 && cl.streams[0].udp != nil && cl.streams[0].udp.Capabilities().GSO)
	}
	session.WarnInterrupted(ctx, cl.r)
	// The server's own error is the cause; a stream it then reset is
	// only the consequence.
	var se *i3wire.ServerErr
	if ctrlErr != nil && (cl.r.Error == "" || errors.As(ctrlErr, &se)) {
		cl.r.Error = ctrlErr.Error()
	}
}

func (cl *i3Client) counters(s *i3ClientStream) *stats.Counters {
	if s.urx != nil {
		return &s.urx.rx.C
	}
	return &s.c
}

// waitEnd returns when the client's end condition is met: every sender
// done (a TCP sender once its data was acknowledged), or for a
// receive-only test the duration or byte count. TEST_END follows at once,
// as iperf3's own client sends it right after its last data, so the
// server's clock stops with the data.
func (cl *i3Client) waitEnd(ctx context.Context, senders *sync.WaitGroup) {
	cfg := cl.cfg
	sending := !cfg.Reverse
	if sending {
		senders.Wait()
		return
	}
	if cfg.Bytes == 0 {
		select {
		case <-time.After(time.Until(cl.start.Add(cfg.Duration))):
		case <-ctx.Done():
		}
		return
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		var got int64
		for _, s := range cl.streams {
			got += cl.counters(s).Bytes.Load()
		}
		if got >= cfg.Bytes {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// sendStream runs one sending stream; wrote is called once its writes
// are over, before a TCP stream's brief wait for acknowledgements.
func (cl *i3Client) sendStream(ctx context.Context, s *i3ClientStream, wrote func()) {
	cfg := cl.cfg
	per := int64(0)
	if cfg.Bytes > 0 {
		per = (cfg.Bytes + int64(cfg.Parallel) - 1) / int64(cfg.Parallel)
	}
	if cfg.UDP {
		s.udpRes, s.err = engine.SendUDP(ctx, s.udp, engine.UDPSendConfig{Template: i3Payload(cfg.Length),
			Stamp: i3Stamp(cfg.UDPCounters64Bit), PPS: cfg.PPS() / float64(cfg.Parallel), Duration: cfg.Duration, Bytes: per, FirstID: 1}, &s.c)
		return
	}
	// No FIN (an iperf3 server stops reading at TEST_END, not at EOF),
	// and only a brief wait: TEST_END must follow the data at once. The
	// writes end with the test's clock, which started at TEST_RUNNING,
	// not with this goroutine's start.
	scfg := engine.TCPSendConfig{Buffer: i3Payload(cfg.Length), Duration: cfg.Duration, Bytes: per}
	if cfg.Duration > 0 {
		scfg.End = cl.start.Add(cfg.Duration)
	}
	sent := session.SendTCPDelivered(ctx, s.tcp, cfg.ZeroCopy, scfg, &s.c, false, wrote, engine.DrainOptions{Brief: true, Preamble: i3wire.CookieSize})
	s.tcpRes, s.tcpDel, s.err = sent.Res, sent.Del, sent.Err
	s.retr.read(s.tcp)
}

// sent is a TCP sending stream's figures.
func (s *i3ClientStream) sent() session.TCPSent {
	return session.TCPSent{Res: s.tcpRes, Del: s.tcpDel, Err: s.err}
}

func (cl *i3Client) recvStream(ctx context.Context, s *i3ClientStream) {
	if s.udp != nil {
		s.err = engine.ReceiveUDP(ctx, s.udp, engine.UDPReceiveConfig{}, func(m *udpio.Message) bool {
			s.urx.feed(m.Buf[:m.N], m.Time)
			return true
		})
		return
	}
	s.tcpRes, s.err = engine.ReceiveTCPWith(ctx, s.tcp, engine.TCPReceiveConfig{BufSize: 128 * 1024, Hold: &cl.hold}, &s.c)
}

// exchange sends our results and reads the server's after EXCHANGE_RESULTS.
func (cl *i3Client) exchange(ctx context.Context) error {
	sctx, cancel := step(ctx)
	defer cancel()
	cl.sent = cl.ourResults()
	if err := cl.conn.WriteResults(sctx, cl.sent); err != nil {
		return fmt.Errorf("sending our iperf3 results: %w", err)
	}
	cl.conn.MaxJSON = 16 << 20 // server_output_json of a long test
	res, err := cl.conn.ReadResults(sctx)
	if err != nil {
		return fmt.Errorf("reading the iperf3 server's results: %w", err)
	}
	cl.peer = res
	if err := cl.expect(sctx, i3wire.DisplayResults); err != nil {
		return err
	}
	if err := cl.conn.WriteState(sctx, i3wire.IperfDone); err != nil {
		return fmt.Errorf("sending IPERF_DONE: %w", err)
	}
	return cl.m.Send(i3wire.IperfDone)
}

// ourResults is our side's results JSON.
func (cl *i3Client) ourResults() *i3wire.Results {
	res := &i3wire.Results{}
	var send []bool
	var retr []i3Retr
	if u, ok := cpuuse.Between(cl.cpu0, cpuuse.Now()); ok {
		res.CPUUtilTotal, res.CPUUtilUser, res.CPUUtilSystem = u.Percent()
	}
	for _, s := range cl.streams {
		send, retr = append(send, s.send), append(retr, s.retr)
		sr := i3wire.StreamResult{ID: s.id}
		switch {
		case s.send && s.udp != nil:
			sr.Bytes, sr.Packets = s.udpRes.Bytes, s.udpRes.Packets
			sr.StartTime, sr.EndTime = 0, s.udpRes.End.Sub(cl.start).Seconds()
		case s.send:
			sd := s.sent().Sender()
			if sd.TCP != nil {
				sr.Retransmits, res.SenderHasRetransmits = sd.TCP.Retransmits, 1
			}
			sr.Bytes = sd.Bytes
			sr.EndTime = s.tcpRes.Start.Sub(cl.start).Seconds() + sd.Seconds
		case s.urx != nil:
			t := s.totals
			sr.Bytes, sr.Packets, sr.Errors, sr.Jitter = t.bytes, t.maxSeq, t.lost, t.jitter.Seconds()
			sr.EndTime = cl.end.Sub(cl.start).Seconds()
		default:
			sr.Bytes = s.tcpRes.Bytes
			sr.EndTime = cl.end.Sub(cl.start).Seconds()
		}
		sr.EndTime = max(sr.EndTime, 0)
		res.Streams = append(res.Streams, sr)
	}
	i3SetRetrans(res, cl.cfg.UDP, send, retr)
	omitStreamResults(res, cl.omitted, cl.cfg.Omit)
	return res
}

// fill puts the figures into the result: our own counts, and the peer's
// receive counts from its results.
func (cl *i3Client) fill() {
	cfg, r := cl.cfg, cl.r
	udp := cfg.UDP
	var snd result.Sender
	var rcv result.Receiver
	var sendIDs []int64
	var sendStreams, recvStreams []*result.Stream
	var first, last time.Time
	for _, s := range cl.streams {
		st := &result.Stream{ID: int(s.id)}
		if s.send {
			sendIDs = append(sendIDs, s.id)
			var sd *result.Sender
			var a, b time.Time
			if !udp {
				sent := s.sent()
				sd = sent.Sender()
				session.WarnDelivery(r, sent)
				a, b = s.tcpRes.Start, s.tcpRes.Start.Add(time.Duration(sd.Seconds*float64(time.Second)))
			} else {
				sd = &result.Sender{Bytes: s.udpRes.Bytes, Packets: s.udpRes.Packets, SendErrors: s.udpRes.Errors,
					Seconds: s.udpRes.End.Sub(s.udpRes.Start).Seconds()}
				a, b = s.udpRes.Start, s.udpRes.End
			}
			if first.IsZero() || a.Before(first) {
				first = a
			}
			last = later(last, b)
			session.RateOf(sd)
			if !udp {
				sd.PacketsPerSecond = 0
			}
			snd.Bytes += sd.Bytes
			session.AddTCPFigures(&snd, sd)
			snd.Packets += sd.Packets
			snd.SendErrors += sd.SendErrors
			st.Sender = sd
			sendStreams = append(sendStreams, st)
		} else {
			var rr *result.Receiver
			if s.urx != nil {
				rr = i3LocalReceiver(s.totals, cl.start, cl.end, s.udp)
			} else {
				rr = &result.Receiver{Bytes: s.tcpRes.Bytes, Seconds: cl.end.Sub(cl.start).Seconds(), Source: "local"}
				i3Rates(rr, false)
			}
			session.SumReceiver(&rcv, rr)
			st.Receiver = rr
			if cfg.Bidir {
				st.Flow = "reverse"
			}
			recvStreams = append(recvStreams, st)
		}
		if s.err != nil && r.Error == "" {
			r.Error = fmt.Sprintf("stream %d: %v", s.id, s.err)
		}
	}
	if !udp {
		rcv.PacketsPerSecond = 0
	}
	var peerRcv *result.Receiver
	if len(sendIDs) > 0 {
		session.SettleWritten(&snd)
		snd.Seconds = last.Sub(first).Seconds()
		session.RateOf(&snd)
		if !udp {
			snd.PacketsPerSecond = 0
		}
		if cl.peer != nil {
			sum, per, lossWhole, err := i3PeerReceiver(cl.peer, sendIDs, udp, cfg.Omit, cl.omitted)
			if lossWhole {
				r.Warn(session.OmitLossWarning)
			}
			if err != nil {
				r.Warn("the server's results do not match our streams: " + err.Error())
			} else {
				peerRcv = sum
				for i, st := range sendStreams {
					st.Receiver = per[i]
				}
			}
		} else {
			r.Warn("no results came back from the iperf3 server: the receiver's counts are unknown")
		}
		if udp {
			session.WarnSender(r, cfg, &snd, 0)
		}
	}
	switch {
	case cfg.Bidir:
		r.Sender, r.Receiver = &snd, peerRcv
		r.Reverse = &result.Flow{Direction: result.DirReceive, Receiver: &rcv}
	case cfg.Reverse:
		r.Receiver = &rcv
		if rcv.Bytes == 0 {
			r.Warn("the iperf3 server sent nothing back")
		}
	default:
		r.Sender, r.Receiver = &snd, peerRcv
	}
	if len(cl.streams) > 1 {
		for _, st := range append(sendStreams, recvStreams...) {
			r.Streams = append(r.Streams, *st)
		}
	}
}

// warnPeerShort says when the iperf3 server counted less than we sent
// (after -O took the omitted period out of both).
func warnPeerShort(r *result.Result, udp bool) {
	snd, sum := r.Sender, r.Receiver
	if snd == nil || sum == nil || sum.Source != "peer-report" {
		return
	}
	if udp && sum.Total < snd.Packets {
		r.Warn(fmt.Sprintf("the iperf3 server's count ends %d datagrams short of the %d we sent: iperf3 stops counting at TEST_END, which follows our last datagram at once (as from iperf3's own client), so datagrams it had not read by then are in neither its count nor its loss",
			snd.Packets-sum.Total, snd.Packets))
	}
	if !udp && sum.Bytes < snd.Bytes {
		r.Warn(fmt.Sprintf("the iperf3 server counted %d bytes fewer than we sent: iperf3 stops counting when the test ends, so data still in flight or unread then is not in its figure (TCP loses nothing; its receiver rate is understated by %.2f %%)",
			snd.Bytes-sum.Bytes, 100*float64(snd.Bytes-sum.Bytes)/float64(snd.Bytes)))
	}
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
