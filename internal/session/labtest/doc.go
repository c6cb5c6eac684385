// Package labtest holds the network-namespace accuracy tests of package
// session: our client and server, and the real iperf 2.1.8 and iperf3 3.12
// binaries, on either side of an emulated Ethernet link built by netlab
// (198.18.0.0/15 only), checked against the line-rate model. They need
// root and network namespaces, take about a minute, and skip with the
// reason otherwise (and with -short).
//
// They live apart from package session so that session's own tests stay
// fast enough to run repeatedly (go test -count=5 ./internal/session/);
// they use only session's exported API. The package has no code outside
// its tests. Run them alone with:
//
//	go test -v ./internal/session/labtest/
package labtest
