// Package iperf3 runs tests in the iperf3 dialect (wire-protocols.md §4)
// from start to end: RunClient drives one test as a client, and Enable
// makes a session.Server answer iperf3 clients too, registering its
// control and stream handling with the server (AddTCPProtocol,
// AddUDPProtocol) the way internal/echo does, on the server's port and
// optionally on iperf3's own. Auth checks iperf3's RSA token and
// wirebench's shared secret on the server side.
//
// The bytes of the protocol (cookies, JSON messages, UDP headers) are
// internal/wire/iperf3's, imported here as i3wire; what every dialect
// shares (the server's ports and bookkeeping, socket set-up, CPU and omit
// accounting, the client config) is internal/session's. Callers usually
// reach RunClient through internal/dialect's table.
package iperf3
