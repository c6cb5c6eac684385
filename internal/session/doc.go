// Package session is what every dialect shares, and the iperf2 family.
//
// Shared: ClientConfig (one client test, any dialect) with its socket
// set-up; Server, which listens on one port for TCP and UDP, tells the
// protocols of new connections and sources apart by their first bytes
// (AddTCPProtocol, AddUDPProtocol: iperf3 in internal/session/iperf3, the
// wirebench echo in internal/echo register there), admits tests per
// source, numbers them and hands their results on; CPU, omit (-O) and
// delivery accounting; errors and retries. The dialects above it reach the
// server's bookkeeping through the methods in host.go. Callers go through
// internal/dialect, whose table says which package runs each dialect.
//
// iperf2 (wire-protocols.md §1–3, §7) is still spoken here, in three
// flavours, chosen with ClientConfig.Dialect on the client
// (RunIperf2Client) and detected per test on the server, which answers it
// on its port when no registered protocol claims a connection or source:
//
//	iperf2         2.1-style: 16-byte UDP header, ids from 1, FIN −(n+1)
//	               re-sent every 10 ms; 60-byte TCP header.
//	iperf2-legacy  2.0.5/lwiperf style: 12-byte UDP header, ids from 0,
//	               FIN −n re-sent 10 × 250 ms; 24-byte TCP header repeated
//	               at the start of every 128 KiB write.
//	raw            no test header (zperf, ESP-IDF): UDP datagrams carry a
//	               16-byte id/time header and zeros; TCP starts with a zero
//	               word.
package session

// Dialect names.
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
