// Package udpstream is the two ends of one iperf2-family UDP stream
// (wire-protocols.md §1): Sender paces data datagrams out and ends with the
// FIN exchange (modern, legacy or 2.1 -R style), waiting for the server
// report; Receiver counts a stream's datagrams as they are fed to it
// (loss, order, jitter, transit, late datagrams and FINs), builds the
// server report at the FIN and answers late FINs, and tells a finished
// test's late datagrams from a new test's start from the same source. It
// knows the bytes (internal/wire/iperf2) and the counting (internal/stats),
// not the server: internal/session/iperf2 owns the sockets' sharing, the
// tests and their results.
package udpstream
