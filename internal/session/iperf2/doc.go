// Package iperf2 runs tests in the iperf2 family of dialects
// (wire-protocols.md §1–3, §7) from start to end: RunClient drives one
// test as a client, and Enable makes a session.Server answer iperf2 as its
// fallback, for every connection and source that no registered protocol
// (iperf3, echo) claims; Listen opens such a server. The flavours are
// chosen with ClientConfig.Dialect on the client and told apart per test
// on the server:
//
//	iperf2         2.1-style: 16-byte UDP header, ids from 1, FIN −(n+1)
//	               re-sent every 10 ms; 60-byte TCP header.
//	iperf2-legacy  2.0.5/lwiperf style: 12-byte UDP header, ids from 0,
//	               FIN −n re-sent 10 × 250 ms; 24-byte TCP header repeated
//	               at the start of every 128 KiB write.
//	raw            no test header (zperf, ESP-IDF): UDP datagrams carry a
//	               16-byte id/time header and zeros; TCP starts with a zero
//	               word.
//
// The server also runs the legacy connect-backs (-r, -d), iperf 2.1's
// reverse and full duplex, and groups a client's parallel streams (-P)
// into one test. The two ends of a UDP stream (the paced sender with its
// FIN exchange, the receiver that counts datagrams and builds the server
// report) are internal/session/iperf2/udpstream's; this package owns the
// sockets, the tests and their results around them. The bytes of the
// protocol are internal/wire/iperf2's, imported here as i2wire; what every
// dialect shares (the server's ports and bookkeeping, socket set-up, CPU
// and omit accounting, the client config) is internal/session's. Callers usually reach RunClient and
// Prepare through internal/dialect's table.
package iperf2
