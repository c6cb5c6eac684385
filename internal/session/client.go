package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sockopt"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// Defaults of a client test, as iperf2 has them.
const (
	DefaultPort        = 5001
	DefaultDuration    = 10 * time.Second
	DefaultUDPLength   = 1470
	DefaultTCPLength   = 128 * 1024
	DefaultUDPRateBPS  = iperf2.DefaultUDPRate // 1048576 bit/s, iperf2's default
	DefaultIdleTimeout = 5 * time.Second
)

// ClientConfig is one client test. The zero value of each field means its
// default.
type ClientConfig struct {
	Host     string
	Port     int
	UDP      bool
	Rate     units.Rate // UDP only; zero = DefaultUDPRateBPS
	Duration time.Duration
	Bytes    int64 // when set, the test ends after this many bytes instead
	Interval time.Duration
	// Omit (-O) is left out of the summary at the start of the test, which
	// then runs Omit + Duration; whole seconds. iperf3 peers are asked to
	// leave it out too; iperf2 has no omit on the wire, so only our own
	// figures leave it out.
	Omit     time.Duration
	Length   int
	Parallel int
	Dialect  string

	Reverse    bool // -R: the server sends on our connection (2.1)
	FullDuplex bool // --full-duplex: both directions on one connection (TCP)
	Tradeoff   bool // -r: the server connects back after our test
	Dual       bool // -d: the server connects back at once
	ListenPort int  // -L: where we listen for the connect-back (default Port)

	// iperf3 dialect only (DialectIperf3, default port 5201).
	Bidir            bool // --bidir: both directions at once, P streams each
	UDPCounters64Bit bool // --udp-counters-64bit: 64-bit UDP sequence numbers
	// Auth authenticates the test to a server that asks for it.
	Auth Iperf3ClientAuth

	// Congestion names the TCP congestion control algorithm for our
	// connections (Linux; "" = the system default).
	Congestion string

	// Socket holds the options for our data sockets: -w, -M, -N, -S, -T.
	Socket sockopt.Options
	// BindHost is the local address our connections start from (-B);
	// "" lets the system choose.
	BindHost string
	// CPort is the local port of the first data stream (--cport, or -B's
	// port); stream i uses CPort+i. 0 lets the system choose.
	CPort int
	// IPv6 makes every connection IPv6 (-V).
	IPv6 bool
	// ZeroCopy sends TCP data with sendfile from a file holding the
	// payload (-Z, iperf3's zero-copy); iperf3 peers are asked to do the
	// same when they send.
	ZeroCopy bool
	// FinLen is, with UDP to an iperf2-dialect server, the shortest length
	// of the final datagrams (FINs), padded past the data's length (0: as
	// long as the data). A server sends its report no longer than the FIN
	// (an iperf 2 client may read it into a buffer of its datagram's
	// length), so a wirebench server's transit summary, which needs
	// iperf2.MinDatagramForLatency bytes, comes back at any data size only
	// when the FIN is at least that long.
	FinLen int
	// NoGSO sends UDP without segmentation offload (UDP_SEGMENT), one
	// datagram per buffer handed to the kernel (--no-gso).
	NoGSO bool
	// NoGRO receives UDP without receive offload (UDP_GRO), so every
	// datagram keeps its own arrival time for jitter (--no-gro).
	NoGRO bool

	// OnInterval, when set, receives each interval as it ends.
	OnInterval func(result.Interval)
	// OnConnected, when set, is called once the first connection (or, for
	// UDP, the first connected socket) exists, with its local and remote
	// addresses as "host:port".
	OnConnected func(local, peer string)
}

// connected reports a new connection to OnConnected.
func (c *ClientConfig) connected(local fmt.Stringer, peer string) {
	if c.OnConnected != nil {
		c.OnConnected(local.String(), peer)
	}
}

// defaults fills what both iperf generations default alike; port, UDP
// length and UDP rate are each generation's own.
func (c *ClientConfig) defaults(port, udpLength int, udpRate float64) {
	if c.Port == 0 {
		c.Port = port
	}
	if c.Duration == 0 && c.Bytes == 0 {
		c.Duration = DefaultDuration
	}
	if c.Length == 0 {
		c.Length = DefaultTCPLength
		if c.UDP {
			c.Length = udpLength
		}
	}
	if c.Parallel == 0 {
		c.Parallel = 1
	}
	if c.UDP && c.Rate.Value == 0 {
		c.Rate = units.Rate{Value: udpRate}
	}
}

// Validate checks a config after defaults.
func (c *ClientConfig) Validate() error {
	switch c.Dialect {
	case DialectIperf2, DialectIperf2Legacy, DialectRaw:
	default:
		return fmt.Errorf("unknown dialect %q (want iperf2, iperf2-legacy, raw or iperf3)", c.Dialect)
	}
	if c.Host == "" {
		return errors.New("no host given")
	}
	if err := c.validateSockets(); err != nil {
		return err
	}
	if c.Port < 1 || c.Port > 65535 {
		return fmt.Errorf("invalid port %d: want 1-65535", c.Port)
	}
	if c.ListenPort < 1 || c.ListenPort > 65535 {
		return fmt.Errorf("invalid listen port -L %d: want 1-65535", c.ListenPort)
	}
	if c.Parallel < 1 || c.Parallel > 128 {
		return fmt.Errorf("parallel streams %d out of range 1-128", c.Parallel)
	}
	if c.Duration < 0 || c.Bytes < 0 {
		return errors.New("duration and byte count must not be negative")
	}
	if err := ValidateOmit(c.Omit, c.Bytes); err != nil {
		return err
	}
	modes := 0
	for _, m := range []bool{c.Reverse, c.FullDuplex, c.Tradeoff, c.Dual} {
		if m {
			modes++
		}
	}
	if modes > 1 {
		return errors.New("choose at most one of -R, --full-duplex, -r and -d")
	}
	if (c.Reverse || c.FullDuplex) && c.Dialect != DialectIperf2 {
		return fmt.Errorf("-R and --full-duplex need the iperf2 (2.1) dialect; %s peers connect back instead (-r/-d)", c.Dialect)
	}
	if (c.Tradeoff || c.Dual) && c.Dialect == DialectRaw {
		return errors.New("-r and -d need a test header: use the iperf2 or iperf2-legacy dialect")
	}
	if c.FullDuplex && c.UDP {
		return errors.New("--full-duplex is for TCP; for UDP use -d")
	}
	if c.UDP {
		min := 16
		if c.Dialect == DialectIperf2Legacy {
			min = 12
		}
		if c.Length < min || c.Length > 65507 {
			return fmt.Errorf("UDP length %d out of range %d-65507 for the %s dialect", c.Length, min, c.Dialect)
		}
	} else if c.Length < 1 || c.Length > 64<<20 {
		return fmt.Errorf("TCP length %d out of range 1 byte to 64 MiB", c.Length)
	}
	return nil
}

func (c *ClientConfig) addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// pps returns the datagram rate the config asks for.
func (c *ClientConfig) pps() float64 {
	if c.Rate.PPS {
		return c.Rate.Value
	}
	return c.Rate.Value / float64(c.Length*8)
}

// ConfigError is a ClientConfig that cannot be run as given.
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// IsConfigError reports whether err says the config was wrong.
func IsConfigError(err error) bool {
	var ce ConfigError
	return errors.As(err, &ce)
}

// WarnInterrupted says so when ctx ended the test before its duration or
// byte count (the first Ctrl-C): the test still ended the proper way, and
// its figures cover the time it ran.
func WarnInterrupted(ctx context.Context, r *result.Result) {
	if ctx.Err() == nil {
		return
	}
	r.Warn("the test was stopped early (interrupt): it ended the proper way, and the figures cover the time it ran")
}
