package echo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/version"
)

// Schema names the JSON documents of this package (docs/latency.md),
// declared in internal/result: result.Latency (kind "request-response")
// and result.UnderLoad (kind "under-load").
const Schema = result.Schema

// Probe protocols, as written in the documents' "proto".
const (
	ProtoUDP     = result.ProbeUDP
	ProtoTCP     = result.ProbeTCP
	ProtoConnect = result.ProbeConnect
)

// Client defaults.
const (
	DefaultPort    = 5001
	DefaultSize    = 64
	DefaultCount   = 10
	DefaultTimeout = time.Second
)

// DialFunc opens a connection, like net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// Config is one request/response latency test. The zero value of each
// field means its default.
type Config struct {
	Host  string
	Port  int    // default DefaultPort
	Proto string // ProtoUDP (default), ProtoTCP or ProtoConnect
	// Count is how many requests to send; Duration bounds the test in time
	// instead. With neither, DefaultCount requests are sent.
	Count    int
	Duration time.Duration
	// Interval is the time from one request to the next; 0 sends the next
	// request as soon as the previous one is answered (or timed out).
	// Requests are never in flight two at a time.
	Interval time.Duration
	// Size is the message size in bytes, header included (default
	// DefaultSize; HeaderLen to MaxUDPLen for UDP, to MaxLen for TCP).
	Size int
	// Timeout is how long a request waits for its reply (default
	// DefaultTimeout); a later reply counts as late.
	Timeout time.Duration
	// Dial opens the test's connections (default net.Dialer.DialContext);
	// labs use it to dial from inside a network namespace.
	Dial DialFunc
}

func (c *Config) applyDefaults() {
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Proto == "" {
		c.Proto = ProtoUDP
	}
	if c.Count == 0 && c.Duration == 0 {
		c.Count = DefaultCount
	}
	if c.Size == 0 {
		c.Size = DefaultSize
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Dial == nil {
		var d net.Dialer
		c.Dial = d.DialContext
	}
}

// Validate checks a config after defaults.
func (c *Config) Validate() error {
	maxSize := MaxUDPLen
	switch c.Proto {
	case ProtoUDP:
	case ProtoTCP, ProtoConnect:
		maxSize = MaxLen
	default:
		return fmt.Errorf("unknown protocol %q (want udp, tcp or connect)", c.Proto)
	}
	switch {
	case c.Host == "":
		return errors.New("no host given")
	case c.Port < 1 || c.Port > 65535:
		return fmt.Errorf("port %d out of range 1-65535", c.Port)
	case c.Count < 0 || c.Duration < 0 || c.Interval < 0:
		return errors.New("count, duration and interval must not be negative")
	case c.Timeout <= 0:
		return errors.New("timeout must be positive")
	case c.Size < HeaderLen || c.Size > maxSize:
		return fmt.Errorf("message size %d out of range %d-%d for %s", c.Size, HeaderLen, maxSize, c.Proto)
	}
	return nil
}

// ConfigError is a Config that cannot be run as given.
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// errTimeout is a request that got no reply in time.
var errTimeout = errors.New("no reply in time")

// prober sends one request and waits for its reply.
type prober interface {
	// probe returns the RTT of request id, errTimeout, or another error
	// for a failed request. ctx's end makes it return ctx.Err().
	probe(ctx context.Context, id uint64, timeout time.Duration) (time.Duration, error)
	// late returns how many late replies were seen so far.
	late() int64
	peer() string
	close()
}

// Run runs one latency test. It returns an error when the test could not
// start (bad config, no socket); a test that started returns its result,
// with Result.Error set if it ended early (ctx's end is not an error: the
// result then holds what was measured).
func Run(ctx context.Context, cfg Config) (*result.Latency, error) {
	cfg.applyDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, ConfigError{err}
	}
	r := &result.Latency{Schema: Schema, Kind: result.KindLatency, Version: version.String(), StartedAt: time.Now(), Warnings: []string{}}
	r.Test = result.LatencyTest{Proto: cfg.Proto, Host: cfg.Host, Port: cfg.Port, Count: cfg.Count,
		Duration: cfg.Duration.Seconds(), Interval: cfg.Interval.Seconds(), Timeout: cfg.Timeout.Seconds()}
	if cfg.Proto != ProtoConnect {
		r.Test.Size = cfg.Size
	}
	p, err := newProber(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer p.close()
	rec := stats.NewRTTRecorder()
	err = runLoop(ctx, p, &cfg, rec, &r.RTTStats)
	r.Test.Peer = p.peer()
	if err != nil {
		r.Error = err.Error()
	}
	if r.Errors > 0 && r.Received == 0 && r.Error == "" {
		r.Error = "every request failed"
	}
	return r, nil
}

// newProber opens the connection the config asks for.
func newProber(ctx context.Context, cfg *Config) (prober, error) {
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	switch cfg.Proto {
	case ProtoConnect:
		return &connectProber{dial: cfg.Dial, addr: addr}, nil
	case ProtoTCP:
		c, err := cfg.Dial(ctx, "tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("connecting to %s: %w", addr, err)
		}
		return newStreamProber(c, cfg.Size, true), nil
	}
	c, err := cfg.Dial(ctx, "udp", addr)
	if err != nil {
		return nil, fmt.Errorf("opening udp to %s: %w", addr, err)
	}
	return newStreamProber(c, cfg.Size, false), nil
}

// runLoop sends requests one at a time until the count or duration is
// reached or ctx ends, recording into rec and st. A request cut short by
// ctx is not counted. It returns an error only for a connection that
// broke.
func runLoop(ctx context.Context, p prober, cfg *Config, rec *stats.RTTRecorder, st *result.RTTStats) error {
	start := time.Now()
	next := start
	var deadline time.Time
	if cfg.Duration > 0 {
		deadline = start.Add(cfg.Duration)
	}
	defer func() {
		st.Late = p.late()
		st.Seconds = time.Since(start).Seconds()
		st.RTT = rec.Summary()
		if st.Sent > 0 {
			st.LossPct = 100 * float64(st.Sent-st.Received) / float64(st.Sent)
		}
		if st.Seconds > 0 {
			st.RequestsPerSecond = float64(st.Received) / st.Seconds
		}
	}()
	for id := uint64(1); ; id++ {
		if cfg.Count > 0 && st.Sent >= int64(cfg.Count) {
			return nil
		}
		if !sleepUntil(ctx, next) || (!deadline.IsZero() && !time.Now().Before(deadline)) {
			return nil
		}
		rtt, err := p.probe(ctx, id, cfg.Timeout)
		if ctx.Err() != nil {
			return nil
		}
		st.Sent++
		switch {
		case err == nil:
			st.Received++
			rec.Record(rtt)
		case errors.Is(err, errTimeout):
			st.Timeouts++
		case errors.Is(err, errBroken):
			st.Errors++
			return err
		default:
			st.Errors++
		}
		next = next.Add(cfg.Interval)
		if now := time.Now(); now.Sub(next) > cfg.Interval {
			next = now // fell behind by more than one interval: no catch-up burst
		}
	}
}

// sleepUntil waits until t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

// errBroken wraps an error after which the connection cannot be used.
var errBroken = errors.New("connection broken")

// streamProber probes over one connection: a connected UDP socket (one
// message per datagram) or a TCP connection (messages back to back).
type streamProber struct {
	c      net.Conn
	stream bool
	msg    []byte
	buf    []byte // received bytes not yet consumed (TCP), or the datagram buffer
	nLate  int64
}

func newStreamProber(c net.Conn, size int, stream bool) *streamProber {
	p := &streamProber{c: c, stream: stream, msg: Append(nil, Message{Kind: KindRequest, Len: size})}
	if stream {
		p.buf = make([]byte, 0, 2*MaxLen)
	} else {
		p.buf = make([]byte, MaxLen)
	}
	return p
}

func (p *streamProber) late() int64  { return p.nLate }
func (p *streamProber) peer() string { return p.c.RemoteAddr().String() }

// close says bye (so the server forgets us at once) and closes.
func (p *streamProber) close() {
	_ = p.c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = p.c.Write(Append(nil, Message{Kind: KindBye}))
	_ = p.c.Close()
}

func (p *streamProber) probe(ctx context.Context, id uint64, timeout time.Duration) (time.Duration, error) {
	t0 := time.Now()
	msg := Append(p.msg[:0], Message{Kind: KindRequest, Len: len(p.msg), ID: id, Sent: t0.UnixNano()})
	stop := context.AfterFunc(ctx, func() { _ = p.c.SetDeadline(time.Now()) })
	defer stop()
	_ = p.c.SetDeadline(t0.Add(timeout))
	if _, err := p.c.Write(msg); err != nil {
		return 0, p.failed("sending a request", err)
	}
	for {
		m, err := p.read()
		if err != nil {
			return 0, p.failed("reading a reply", err)
		}
		switch {
		case m.Kind == KindReply && m.ID == id:
			return time.Since(t0), nil
		case m.Kind == KindReply && m.ID < id:
			p.nLate++
		}
	}
}

// failed classifies an I/O error: a deadline is a timeout; on TCP
// anything else breaks the connection.
func (p *streamProber) failed(what string, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errTimeout
	}
	if p.stream {
		return fmt.Errorf("%s: %w: %w", what, errBroken, err)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%s: nothing listens on the udp port: %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// read returns the next message from the peer. On TCP, bytes of a message
// cut by a deadline stay buffered for the next call.
func (p *streamProber) read() (Message, error) {
	if !p.stream {
		for {
			n, err := p.c.Read(p.buf)
			if err != nil {
				return Message{}, err
			}
			if m, err := Parse(p.buf[:n]); err == nil {
				return m, nil
			}
		}
	}
	for {
		if len(p.buf) >= HeaderLen {
			m, err := ParseHeader(p.buf)
			if err != nil {
				return Message{}, fmt.Errorf("decoding the reply stream: %w", err)
			}
			if len(p.buf) >= m.Len {
				p.buf = p.buf[:copy(p.buf, p.buf[m.Len:])]
				return m, nil
			}
		}
		n, err := p.c.Read(p.buf[len(p.buf):cap(p.buf)])
		p.buf = p.buf[:len(p.buf)+n]
		if err != nil {
			return Message{}, err
		}
	}
}

// connectProber times TCP handshakes.
type connectProber struct {
	dial DialFunc
	addr string
	last string
}

func (p *connectProber) late() int64  { return 0 }
func (p *connectProber) peer() string { return p.last }
func (p *connectProber) close()       {}

func (p *connectProber) probe(ctx context.Context, _ uint64, timeout time.Duration) (time.Duration, error) {
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t0 := time.Now()
	c, err := p.dial(dctx, "tcp", p.addr)
	rtt := time.Since(t0)
	if err != nil {
		if ctx.Err() == nil && dctx.Err() != nil {
			return 0, errTimeout
		}
		return 0, fmt.Errorf("connecting to %s: %w", p.addr, err)
	}
	p.last = c.RemoteAddr().String()
	// A bye lets the server close at once, without logging a test.
	_ = c.SetWriteDeadline(time.Now().Add(timeout))
	_, _ = c.Write(Append(nil, Message{Kind: KindBye}))
	_ = c.Close()
	return rtt, nil
}
