package matrix

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/calc"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
)

// Options are what the matrix command is asked, as typed: Options.Config
// checks them and builds the matrix's configuration. Every error Config
// returns is a mistake in them.
type Options struct {
	Port    int
	Seconds float64 // per cell
	Rate    string  // UDP cells' rate ("": the medium's line rate, else iperf's 1 Mbit/s)
	Length  string  // UDP payload / TCP write size ("": the client's default)
	Proto   string  // tcp, udp or both
	Bidir   bool    // a row per protocol with both directions at once
	// Interval is the time between the interval samples kept (0: none),
	// checked by the caller.
	Interval time.Duration
	// Dialect is the peer's dialect, "" to be chosen later (probed);
	// DialectGiven says --dialect was given (else port 5201 is iperf3).
	Dialect      string
	DialectGiven bool
}

// Protos are the values of --proto.
var Protos = []string{result.TCP, result.UDP, "both"}

// Config checks the options and builds the configuration of a matrix
// against host, placing its cells on link's medium when link is not nil,
// with notes for the document's warnings.
func (o Options) Config(host string, link *calc.Placer) (Config, []string, error) {
	base := session.ClientConfig{Host: host, Port: o.Port, Dialect: o.Dialect, Parallel: 1, Interval: o.Interval}
	if !o.DialectGiven && o.Port == session.DefaultIperf3Port {
		base.Dialect = session.DialectIperf3
	}
	var notes []string
	if o.Seconds <= 0 || math.IsInf(o.Seconds, 0) || math.IsNaN(o.Seconds) || o.Seconds > 86400 {
		return Config{}, nil, fmt.Errorf("invalid duration -t %v: want seconds > 0", o.Seconds)
	}
	base.Duration = time.Duration(o.Seconds * float64(time.Second))
	switch {
	case o.Rate != "":
		r, err := units.ParseRate(o.Rate)
		if err != nil {
			return Config{}, nil, err
		}
		base.Rate = r
	case link != nil:
		base.Rate = units.Rate{Value: link.Medium.BitRate}
	case o.Proto != result.TCP: // (a TCP-only matrix has no UDP cells to say it of)
		notes = append(notes, "the UDP cells ran at iperf's default 1 Mbit/s: pass -b (or --medium) to load the link")
	}
	if o.Length != "" {
		n, err := units.ParseSize(o.Length)
		if err != nil {
			return Config{}, nil, err
		}
		base.Length = int(min(n, math.MaxInt32))
	}
	cfg := Config{Base: base, Bidir: o.Bidir, Pause: DefaultPause}
	switch o.Proto {
	case "both":
	case result.TCP, result.UDP:
		cfg.Protocols = []string{o.Proto}
	default:
		return Config{}, nil, fmt.Errorf("invalid --proto %q: want one of %s", o.Proto, strings.Join(Protos, ", "))
	}
	if link != nil {
		cfg.Place = func(r *result.Result, goodput float64) (float64, bool) {
			link.Apply(r)
			return link.Percent(r, goodput)
		}
	}
	return cfg, notes, nil
}
