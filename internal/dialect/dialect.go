// Package dialect is the table of the wire dialects wirebench speaks as a
// client: one row per dialect, naming its default port, the code that runs
// its client, the server protocol that answers it and what its wire can
// ask of a peer. Callers run a client test through RunClient and check a
// config through Prepare; both look the dialect up here. Adding a dialect
// means adding the package that speaks it and a row to the table.
package dialect

import (
	"context"
	"fmt"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/session/iperf3"
)

// Server protocols: what a wirebench server must answer for a dialect's
// client to find it (see Dialect.Server).
const (
	// ServerIperf2 is the server's own protocol on its main port: iperf2
	// in every flavour, told apart per test.
	ServerIperf2 = "iperf2"
	// ServerIperf3 is iperf3's control protocol, which a server answers
	// once iperf3 is enabled on it (iperf3.Enable).
	ServerIperf3 = "iperf3"
)

// How a dialect's client asks the peer to send (Dialect.Download) or to
// send while it receives (Dialect.BidirTCP, Dialect.BidirUDP): the flag a
// user would give, "" when the wire has no way to ask.
const (
	AskReverse    = "-R"
	AskTradeoff   = "-r"
	AskDual       = "-d"
	AskFullDuplex = "--full-duplex"
	AskBidir      = "--bidir"
)

// Dialect is one row of the table.
type Dialect struct {
	// Name is the dialect's name (--dialect, result.Test.Dialect).
	Name string
	// Speakers says which peers speak it.
	Speakers string
	// DefaultPort is the port its client connects to when none is given.
	DefaultPort int
	// Server is the server protocol that answers its clients
	// (ServerIperf2 or ServerIperf3).
	Server string
	// Header says the test starts with a header the peer reads, so the
	// peer can be asked to send back.
	Header bool
	// Report says the peer reports what it received at the end of a test
	// (what a sweep's trials are judged on).
	Report bool
	// Download is how the client asks the peer to send (AskReverse or
	// AskTradeoff; "" when it cannot).
	Download string
	// BidirTCP and BidirUDP are how the client asks for both directions
	// at once ("" when it cannot).
	BidirTCP, BidirUDP string
	// Prepare applies the dialect's defaults to a config and checks it
	// (errors are session.ConfigError).
	Prepare func(session.ClientConfig) (session.ClientConfig, error)
	// Run runs one client test (see RunClient).
	Run func(context.Context, session.ClientConfig) (*result.Result, error)
}

// table is every dialect, the default first.
var table = []Dialect{
	{
		Name: session.DialectIperf2, Speakers: "iperf 2.1 and later, wirebench",
		DefaultPort: session.DefaultPort, Server: ServerIperf2, Header: true, Report: true,
		Download: AskReverse, BidirTCP: AskFullDuplex, BidirUDP: AskDual,
		Prepare: iperf2.Prepare, Run: iperf2.RunClient,
	},
	{
		Name: session.DialectIperf2Legacy, Speakers: "iperf 2.0.5 and lwIP's lwiperf",
		DefaultPort: session.DefaultPort, Server: ServerIperf2, Header: true, Report: true,
		Download: AskTradeoff, BidirTCP: AskDual, BidirUDP: AskDual,
		Prepare: iperf2.Prepare, Run: iperf2.RunClient,
	},
	{
		Name: session.DialectRaw, Speakers: "zperf and ESP-IDF's iperf, which send no test header",
		DefaultPort: session.DefaultPort, Server: ServerIperf2,
		Prepare: iperf2.Prepare, Run: iperf2.RunClient,
	},
	{
		Name: session.DialectIperf3, Speakers: "iperf3",
		DefaultPort: session.DefaultIperf3Port, Server: ServerIperf3, Header: true, Report: true,
		Download: AskReverse, BidirTCP: AskBidir, BidirUDP: AskBidir,
		Prepare: iperf3.Prepare, Run: iperf3.Run,
	},
}

// Default is the dialect a config with no Dialect speaks.
const Default = session.DialectIperf2

// All returns the table's rows, the default first.
func All() []Dialect { return append([]Dialect(nil), table...) }

// Names lists the dialect names (--dialect), the default first.
func Names() []string {
	out := make([]string, len(table))
	for i, d := range table {
		out[i] = d.Name
	}
	return out
}

// Lookup finds a dialect by name; "" is Default.
func Lookup(name string) (Dialect, bool) {
	if name == "" {
		name = Default
	}
	for _, d := range table {
		if d.Name == name {
			return d, true
		}
	}
	return Dialect{}, false
}

// Known reports whether name is a dialect of the table ("" is not).
func Known(name string) bool {
	_, ok := Lookup(name)
	return ok && name != ""
}

// Of is the row of cfg's dialect; a config with an unknown dialect gets
// an error saying which ones there are.
func Of(cfg session.ClientConfig) (Dialect, error) {
	d, ok := Lookup(cfg.Dialect)
	if !ok {
		return d, session.ConfigError{Err: fmt.Errorf("unknown dialect %q (want %s)", cfg.Dialect, OneOf(Names()...))}
	}
	return d, nil
}

// OneOf spells a list of names for a message: "a, b or c".
func OneOf(names ...string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Prepare applies the defaults of cfg's dialect and checks it the way
// RunClient will, so that a caller can reject a config (a
// session.ConfigError) before it prints anything. The returned config is
// what would run.
func Prepare(cfg session.ClientConfig) (session.ClientConfig, error) {
	d, err := Of(cfg)
	if err != nil {
		return cfg, err
	}
	return d.Prepare(cfg)
}

// RunClient runs one client test in cfg's dialect. It returns an error
// when the test could not start (bad config, peer unreachable); a test
// that started and then failed returns its partial result with
// Result.Error set, and a nil error.
//
// When ctx ends during the test (the first Ctrl-C), the test ends the
// proper way, as at its planned end: the sender stops, the FINs (UDP), the
// TCP FIN or iperf3's TEST_END go out, and the peer's report is awaited
// for a bounded time that ctx does not cut short. The result then carries
// a warning that the test was stopped early.
func RunClient(ctx context.Context, cfg session.ClientConfig) (*result.Result, error) {
	d, err := Of(cfg)
	if err != nil {
		return nil, err
	}
	return d.Run(ctx, cfg)
}
