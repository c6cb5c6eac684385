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
			s.urx.publish()
		}
	}
	return errors.New("no udp connect reply among the first datagrams")
}
