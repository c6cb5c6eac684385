// Package iperf2 encodes and decodes the iperf2 wire formats: the UDP datagram header, the client test header
// (client_hdr_v1 plus the 2.1 extension), the UDP server report ("AckFIN"), the TCP CLIENTHDRACK, and the
// heuristics that tell the modern (16-byte) and legacy (12-byte) UDP dialects apart.
//
// It is a pure codec: no sockets, no clocks, no goroutines, no package state. Every decoder accepts arbitrary
// bytes without panicking (see the Fuzz* targets); encoders append to or fill caller-supplied buffers.
// All multi-byte integers on the wire are big-endian.
//
// Reference: docs/wire-protocols.md §1 (UDP), §2 (TCP), §3 (modes), §7 (recommendations), checked
// against iperf 2.1.8 source (payloads.h, Settings_GenerateClientHdr, Server::write_UDP_AckFIN,
// Listener::client_test_ack) and against bytes captured from the real iperf 2.1.8 on loopback (see
// capture_test.go).
package iperf2
