// Package client runs the client command's test: Options, the command's
// flags as typed, are checked and turned into a session.ClientConfig; the
// dialect is chosen (the port, --dialect or a short probe of the peer); the
// test runs through the dialect table, beside an RTT probe when --latency
// asks for one; and the result carries how its dialect was chosen. The cli
// keeps only the flags, the output and the exit codes.
package client

import (
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sockopt"
	"github.com/wirebench/wirebench/internal/units"
)

// Options are the client command's test flags as typed. Config checks
// them: every error it returns is a mistake in them, naming the flag.
type Options struct {
	Port       int     // -p
	UDP        bool    // -u
	Rate       string  // -b: 100M or 8000pps
	Seconds    float64 // -t
	Num        string  // -n: bytes instead of a time
	Interval   float64 // -i: seconds between reports, 0 for none
	Omit       int     // -O: seconds
	Length     string  // -l
	Parallel   int     // -P
	Reverse    bool    // -R
	Tradeoff   bool    // -r
	Dual       bool    // -d
	ListenPort int     // -L
	FullDuplex bool    // --full-duplex
	Dialect    string  // --dialect: a dialect's name, auto or ""
	Congestion string  // -C
	Bidir      bool    // --bidir
	Counters64 bool    // --udp-counters-64bit
	Bind       string  // -B: host, host:port, [v6]:port
	CPort      int     // --cport
	ZeroCopy   bool    // -Z
	IPv6       bool    // -V
	NoGSO      bool    // --no-gso
	NoGRO      bool    // --no-gro
	Socket     sockopt.Typed
}

// DialectNames are the values --dialect takes: the dialect table's and
// auto (probe the peer first).
func DialectNames() []string { return append(dialect.Names(), probe.DialectAuto) }

// CheckDialect checks --dialect alone (Config checks it first too).
func (o Options) CheckDialect() error {
	if o.Dialect == "" || slices.Contains(DialectNames(), o.Dialect) {
		return nil
	}
	return fmt.Errorf("invalid --dialect %q: want one of %s", o.Dialect, strings.Join(DialectNames(), ", "))
}

// Config checks the options and turns them into the test for host.
func (o Options) Config(host string) (session.ClientConfig, error) {
	cfg := session.ClientConfig{
		Host: host, Port: o.Port, UDP: o.UDP, Parallel: o.Parallel, Dialect: o.Dialect,
		Reverse: o.Reverse, Tradeoff: o.Tradeoff, Dual: o.Dual, ListenPort: o.ListenPort, FullDuplex: o.FullDuplex,
		Bidir: o.Bidir, UDPCounters64Bit: o.Counters64, Congestion: o.Congestion,
	}
	if err := o.CheckDialect(); err != nil {
		return cfg, err
	}
	if o.Parallel < 1 {
		return cfg, fmt.Errorf("invalid -P %d: want at least 1 stream", o.Parallel)
	}
	if _, err := units.Seconds("-t", o.Seconds); err != nil || o.Seconds == 0 {
		return cfg, fmt.Errorf("invalid duration -t %v: want seconds > 0", o.Seconds)
	}
	cfg.Duration = time.Duration(o.Seconds * float64(time.Second))
	var err error
	if cfg.Interval, err = units.ReportInterval(o.Interval); err != nil {
		return cfg, err
	}
	if o.Omit < 0 || time.Duration(o.Omit)*time.Second > session.MaxOmit {
		return cfg, fmt.Errorf("invalid -O %d: want 0-%d seconds", o.Omit, int(session.MaxOmit/time.Second))
	}
	cfg.Omit = time.Duration(o.Omit) * time.Second
	if err := o.sizes(&cfg); err != nil {
		return cfg, err
	}
	if o.ListenPort != 0 && !o.Tradeoff && !o.Dual {
		return cfg, errors.New("-L is the port for the -r/-d connect-back; add -r or -d")
	}
	if cfg.Socket, err = o.Socket.Options(); err != nil {
		return cfg, err
	}
	cfg.IPv6, cfg.ZeroCopy, cfg.NoGSO, cfg.NoGRO = o.IPv6, o.ZeroCopy, o.NoGSO, o.NoGRO
	if o.ZeroCopy && o.UDP {
		return cfg, errors.New("-Z (zero-copy send) is for TCP")
	}
	return cfg, o.local(&cfg)
}

// sizes sets the rate (-b), the byte count (-n) and the length (-l).
func (o Options) sizes(cfg *session.ClientConfig) error {
	if o.Rate != "" {
		r, err := units.ParseRate(o.Rate)
		if err != nil {
			return err
		}
		if !o.UDP {
			return errors.New("-b sets a UDP rate; add -u (TCP is not paced)")
		}
		cfg.Rate = r
	}
	if o.Num != "" {
		n, err := units.ParseSize(o.Num)
		if err != nil || n == 0 {
			return fmt.Errorf("invalid byte count -n %q: want a positive size like 10M", o.Num)
		}
		cfg.Bytes, cfg.Duration = n, 0
	}
	if o.Length != "" {
		n, err := units.ParseSize(o.Length)
		if err != nil {
			return err
		}
		cfg.Length = int(min(n, math.MaxInt32))
	}
	return nil
}

// local sets where our connections start from (-B, --cport).
func (o Options) local(cfg *session.ClientConfig) error {
	if o.Bind != "" {
		var err error
		if cfg.BindHost, cfg.CPort, err = ParseBind(o.Bind); err != nil {
			return err
		}
	}
	if o.CPort != 0 {
		if cfg.CPort != 0 {
			return fmt.Errorf("-B %s already names the client port; drop --cport or the port in -B", o.Bind)
		}
		if o.CPort < 1 || o.CPort > 65535 {
			return fmt.Errorf("invalid --cport %d: want 1-65535", o.CPort)
		}
		cfg.CPort = o.CPort
	}
	return nil
}

// ParseBind reads iperf 2's client -B: host, host:port, [v6]:port or a
// bare IPv6 address. port is 0 when none was given.
func ParseBind(s string) (host string, port int, err error) {
	if strings.Contains(s, "%") {
		return "", 0, fmt.Errorf("invalid -B %q: binding to a device (%%dev) is not supported; give an address", s)
	}
	host, ps, hasPort := s, "", false
	switch {
	case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
		host = s[1 : len(s)-1]
	case strings.HasPrefix(s, "["):
		if host, ps, err = net.SplitHostPort(s); err != nil {
			return "", 0, fmt.Errorf("invalid -B %q: want host, host:port or [v6]:port", s)
		}
		hasPort = true
	case strings.Count(s, ":") == 1:
		host, ps, _ = net.SplitHostPort(s)
		hasPort = true
	}
	if host == "" {
		return "", 0, fmt.Errorf("invalid -B %q: no address", s)
	}
	if hasPort {
		p, perr := strconv.Atoi(ps)
		if perr != nil || p < 1 || p > 65535 {
			return "", 0, fmt.Errorf("invalid -B %q: port must be 1-65535", s)
		}
		port = p
	}
	return host, port, nil
}
