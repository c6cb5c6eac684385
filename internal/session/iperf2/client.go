package iperf2

import (
	"context"
	"errors"
	"fmt"

	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"

	"github.com/wirebench/wirebench/internal/cpuuse"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/version"
)

// Prepare applies the defaults of an iperf2-family dialect (iperf2,
// iperf2-legacy, raw) and checks cfg the way RunClient will, so that
// a caller can reject a config (a ConfigError) before it prints anything.
// The returned config is what would run.
func Prepare(cfg session.ClientConfig) (session.ClientConfig, error) {
	if cfg.Bidir || cfg.UDPCounters64Bit {
		return cfg, session.ConfigError{Err: errors.New("--bidir and --udp-counters-64bit need the iperf3 dialect")}
	}
	if cfg.Auth.Enabled() {
		return cfg, session.ConfigError{Err: errors.New("authentication (--username, --auth-secret) is carried only by the iperf3 dialect; iperf2 has none")}
	}
	applyDefaults(&cfg)
	if err := cfg.Validate(); err != nil {
		return cfg, session.ConfigError{Err: err}
	}
	if s := udpClientStream(&cfg); cfg.UDP && (cfg.Tradeoff || cfg.Dual) && cfg.Length < s.Layout.HeaderLen()+len(s.Header) {
		return cfg, session.ConfigError{Err: fmt.Errorf("-r and -d over UDP need -l of at least %d bytes: shorter datagrams cut the header that asks the server to connect back", s.Layout.HeaderLen()+len(s.Header))}
	}
	return cfg, nil
}

func applyDefaults(c *session.ClientConfig) {
	c.Defaults(session.DefaultPort, session.DefaultUDPLength, session.DefaultUDPRateBPS)
	if c.Dialect == "" {
		c.Dialect = session.DialectIperf2
	}
	if c.ListenPort == 0 {
		c.ListenPort = c.Port
	}
}

// mode names the test's direction mode for result.Test.Mode.
func mode(c *session.ClientConfig) string {
	switch {
	case c.Reverse:
		return "reverse"
	case c.FullDuplex:
		return "full-duplex"
	case c.Dual:
		return "dual"
	case c.Tradeoff:
		return "tradeoff"
	}
	return ""
}

// RunClient runs one client test in an iperf2-family dialect
// (iperf2, iperf2-legacy, raw; internal/dialect picks the runner of each
// dialect). It returns an error when the test could
// not start (bad config, peer unreachable); a test that started and then
// failed returns its partial result with Result.Error set, and a nil error.
//
// When ctx ends during the test (the first Ctrl-C), the test ends the proper
// way, as at its planned end: the sender stops, the FINs (UDP), the TCP FIN
// or iperf3's TEST_END go out, and the peer's report is awaited for a
// bounded time (about 2.5 s for UDP) that ctx does not cut short. The
// result then carries a warning that the test was stopped early.
func RunClient(ctx context.Context, cfg session.ClientConfig) (*result.Result, error) {
	cfg, err := Prepare(cfg)
	if err != nil {
		return nil, err
	}
	r := result.New("client")
	r.Version = version.String()
	r.Test = result.Test{
		Protocol: result.TCP, Direction: result.DirSend, Dialect: cfg.Dialect, Host: cfg.Host, Port: cfg.Port,
		Duration: cfg.Duration.Seconds(), Bytes: cfg.Bytes, Length: cfg.Length, Streams: cfg.Parallel, Mode: mode(&cfg),
	}
	switch {
	case cfg.Reverse:
		r.Test.Direction = result.DirReceive
	case cfg.FullDuplex || cfg.Dual:
		r.Test.Direction = result.DirBidir
	}
	cpu0 := cpuuse.Now()
	run := runTCPClient
	if cfg.UDP {
		r.Test.Protocol = result.UDP
		r.Test.RatePPS = cfg.PPS()
		r.Test.RateBPS = cfg.PPS() * float64(cfg.Length*8)
		run = runUDPClient
	}
	// The omitted seconds come first, then the test asked for: the peer
	// is asked for the whole of it.
	cfg.Duration += cfg.Omit
	r, err = run(ctx, &cfg, r)
	if r != nil {
		session.ApplyOmit(r, cfg.Omit, nil, false)
		session.FillCPU(r, cpu0)
	}
	return r, err
}

// modeFlags sets the header bits for the test's mode.
func modeFlags(c *session.ClientConfig, h *i2wire.ClientHeader) {
	switch {
	case c.Tradeoff:
		h.Flags |= i2wire.FlagVersion1
	case c.Dual:
		h.Flags |= i2wire.FlagVersion1 | i2wire.FlagRunNow
	case c.Reverse:
		h.Flags |= i2wire.FlagVersion2
		h.UpperFlags |= i2wire.UpperReverse
	case c.FullDuplex:
		h.Flags |= i2wire.FlagVersion2
		h.UpperFlags |= i2wire.UpperFullDuplex
	}
	if c.UDP && (c.Reverse || c.FullDuplex) {
		h.Flags |= i2wire.FlagUDPTests
	}
	if c.Tradeoff || c.Dual {
		h.Port = int32(c.ListenPort)
	}
}

// asksTCPReport says the test asks a wirebench server for its received
// count (iperf2 dialect, TCP, the client sending only; iperf 2 servers
// ignore the request).
func asksTCPReport(c *session.ClientConfig) bool {
	return c.Dialect == session.DialectIperf2 && !c.UDP && !c.Reverse && !c.FullDuplex && !c.Tradeoff && !c.Dual
}

// header builds the test header for the dialect; nil for raw. It always
// carries the length (2.1.8 sends it only for an explicit -l); a server
// uses it for the datagrams or writes it sends back.
func header(c *session.ClientConfig, udp bool) []byte {
	amount := i2wire.AmountForDuration(c.Duration)
	if c.Bytes > 0 {
		amount = i2wire.AmountForBytes(c.Bytes)
	}
	switch c.Dialect {
	case session.DialectIperf2:
		h := i2wire.NewClientHeader(udp, int32(c.Parallel), int32(c.Port))
		h.Amount = amount
		if udp {
			h.SetRate(uint64(c.Rate.Value), c.Rate.PPS)
			if c.Rate.PPS {
				h.UpperFlags |= i2wire.UpperUnitsPPS
			}
		}
		h.BufLen = int32(c.Length)
		modeFlags(c, &h)
		if udp {
			return h.AppendUDPTo(nil)
		}
		if asksTCPReport(c) {
			h.Reserved = i2wire.ReservedAskTCPReport
		}
		return h.AppendTo(nil)
	case session.DialectIperf2Legacy:
		h := i2wire.ClientHeader{NumThreads: int32(c.Parallel), Port: int32(c.Port), Amount: amount}
		if udp {
			h.WinBand = int32(min(c.Rate.Value, 1<<31-1))
			if c.Rate.PPS {
				h.WinBand = int32(min(c.Rate.Value*float64(c.Length*8), 1<<31-1))
			}
		}
		h.BufLen = int32(c.Length)
		modeFlags(c, &h)
		return h.AppendTo(nil)
	}
	return nil
}
