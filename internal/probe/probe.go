package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/version"
)

// Defaults.
const (
	DefaultPort    = 5001
	DefaultTimeout = 500 * time.Millisecond // per reply wait
	// MaxTotal bounds a whole probe.
	MaxTotal = 10 * time.Second
)

// Config is one probe.
type Config struct {
	Host string
	Port int // default DefaultPort
	// Timeout is how long each step waits for a reply (default
	// DefaultTimeout, at most 2 s). Steps that stream data (reverse,
	// connect-back) may take up to three times as long.
	Timeout time.Duration
	// Dial opens connections (default net.Dialer.DialContext).
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Listen opens the connect-back listener (default net.ListenConfig.Listen).
	Listen func(ctx context.Context, network, address string) (net.Listener, error)
}

func (c *Config) applyDefaults() {
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Dial == nil {
		var d net.Dialer
		c.Dial = d.DialContext
	}
	if c.Listen == nil {
		var lc net.ListenConfig
		c.Listen = lc.Listen
	}
}

// Validate checks a config after defaults.
func (c *Config) Validate() error {
	switch {
	case c.Host == "":
		return errors.New("no host given")
	case c.Port < 1 || c.Port > 65535:
		return fmt.Errorf("port %d out of range 1-65535", c.Port)
	case c.Timeout <= 0 || c.Timeout > 2*time.Second:
		return fmt.Errorf("timeout %v out of range (0, 2s]", c.Timeout)
	}
	return nil
}

// prober carries one Run's state.
type prober struct {
	cfg  Config
	addr string
	res  *result.Probe
}

// Run probes cfg.Host:cfg.Port. An error means the probe could not be made
// (bad config); a peer that answers nothing is a normal result.Probe with
// Answered false. The whole probe is bounded by MaxTotal.
func Run(ctx context.Context, cfg Config) (*result.Probe, error) {
	cfg.applyDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, MaxTotal)
	defer cancel()
	start := time.Now()
	p := &prober{cfg: cfg, addr: net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)), res: &result.Probe{
		Schema: result.Schema, Kind: result.KindProbe, Version: version.String(), Host: cfg.Host, Port: cfg.Port, StartedAt: start.UTC(),
		Iperf2: result.ProbeIperf2{Reverse: result.ProbeUntested, ConnectBack: result.ProbeUntested, ServerReport: result.ProbeUntested},
		Iperf3: result.ProbeIperf3{Reverse: result.ProbeUntested},
		Steps:  []result.ProbeStep{},
	}}
	p.runTCP(ctx)
	p.runUDP(ctx)
	p.res.ElapsedMs = ms(time.Since(start))
	Summarize(p.res)
	return p.res, nil
}

// runTCP does the TCP steps in order; each decides whether the next is safe.
func (p *prober) runTCP(ctx context.Context) {
	op := p.opening(ctx)
	switch op {
	case OpeningRefused:
		return
	case OpeningIperf3, OpeningIperf3Busy:
		if !p.res.Wirebench.Iperf3Ext {
			return // a plain iperf3 server would log an iperf2 header as an error
		}
		// A wirebench server answers iperf3 and iperf2 on one port, and
		// the iperf2 probes are harmless to it.
		p.headerProbe(ctx)
	case OpeningSilent, OpeningClosed, OpeningOther:
		p.headerProbe(ctx)
	}
	if p.res.Iperf2.TCP {
		// A silent peer gets a second try: a real iperf 2.1.8 server now
		// and then leaves a test that follows another at once unserved.
		for try := 1; try <= 2 && p.reverseProbe(ctx, try); try++ {
		}
		for try := 1; try <= 2 && p.dualProbe(ctx, try); try++ {
		}
	}
	p.echoTCP(ctx)
}

// runUDP runs the iperf2 UDP test and, for a wirebench peer, the UDP echo.
func (p *prober) runUDP(ctx context.Context) {
	p.iperf2UDP(ctx)
	if p.res.Wirebench.EchoTCP || p.res.Wirebench.Iperf3Ext {
		p.echoUDP(ctx)
	}
}

// step appends a result.ProbeStep record.
func (p *prober) step(name, verdict, detail string, since time.Time) {
	p.res.Steps = append(p.res.Steps, result.ProbeStep{Name: name, Verdict: verdict, Detail: detail, ElapsedMs: ms(time.Since(since))})
}

// dial opens a TCP connection; a refusal after an earlier accepted
// connection is recorded in LaterRefused.
func (p *prober) dial(ctx context.Context) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout*2)
	defer cancel()
	c, err := p.cfg.Dial(ctx, "tcp", p.addr)
	if err != nil {
		if p.res.TCP.Open && isRefused(err) {
			p.res.TCP.LaterRefused = true
		}
		return nil, fmt.Errorf("connecting to %s: %w", p.addr, err)
	}
	p.res.TCP.Open = true
	return c, nil
}

func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Check rejects a port or a timeout the probe command cannot use: a
// port of 1 to 65535, a timeout in (0, 2s].
func (c Config) Check() error {
	if c.Port < 1 || c.Port > 65535 {
		return fmt.Errorf("invalid port %d", c.Port)
	}
	if c.Timeout <= 0 || c.Timeout > 2*time.Second {
		return fmt.Errorf("invalid --timeout %v: want a duration in (0, 2s]", c.Timeout)
	}
	return nil
}
