// Package session is what every dialect shares.
//
// ClientConfig is one client test, in any dialect, with its socket
// set-up. Server listens on one port for TCP and UDP and tells the
// protocols of new connections and sources apart by their first bytes:
// the ones registered with AddTCPProtocol and AddUDPProtocol (iperf3 in
// internal/session/iperf3, the wirebench echo in internal/echo) first,
// then the fallback set with SetFallback (iperf2 in all its flavours, in
// internal/session/iperf2), which answers whatever no other protocol
// claims. The server admits tests per source, numbers them and hands
// their results on; CPU, omit (-O) and delivery accounting, errors and
// retries are here too. The dialects reach the server's bookkeeping
// through the methods in host.go. Callers go through internal/dialect,
// whose table says which package runs each dialect.
package session

// Dialect names: the iperf2 family (wire-protocols.md §1–3, §7), spoken
// by internal/session/iperf2.
const (
	DialectIperf2       = "iperf2"
	DialectIperf2Legacy = "iperf2-legacy"
	DialectRaw          = "raw"
)

// DialectIperf3 is the iperf3 control protocol (wire-protocols.md §4),
// spoken by internal/session/iperf3.
const DialectIperf3 = "iperf3"

// DefaultIperf3Port is iperf3's port.
const DefaultIperf3Port = 5201
