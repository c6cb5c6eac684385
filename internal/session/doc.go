// Package session runs tests from start to end in one dialect: it ties a
// wire codec (internal/wire/...) to the traffic engine and produces a
// result.Result. RunClient drives one test as a client; Server answers any
// number of tests at once on one port, telling the dialects apart by what
// arrives.
//
// iperf2 (wire-protocols.md §1–3, §7) is spoken in three flavours, chosen
// with ClientConfig.Dialect on the client and detected per test on the
// server:
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

// Dialects lists the dialect names a client takes (--dialect), the
// default first.
var Dialects = []string{DialectIperf2, DialectIperf2Legacy, DialectRaw, DialectIperf3}
