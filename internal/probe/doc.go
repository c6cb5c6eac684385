// Package probe is wirebench's quick compatibility check: which iperf
// dialects a peer answers on one port, with versions where the wire reveals
// them, and which optional features it supports.
//
// Every step is a short, bounded exchange that ends the way a real client
// would end it, so the peer is left ready for the next test:
//
//	step            wire                                       tells
//	--------------  -----------------------------------------  ------------------------------------------
//	tcp-opening     37-byte iperf3 cookie starting with '2'    iperf3: state byte 9 (or 0xFF busy);
//	                                                           iperf 2.1+: 28/52-byte CLIENTHDRACK (the
//	                                                           word "2xxx" has V2PEERDETECT but none of
//	                                                           VERSION1/VERSION2/EXTEND, so 2.1.8 takes
//	                                                           the bytes as plain data and acks, with its
//	                                                           version); silence: a header-less sink
//	iperf3-test     tiny TCP test (1 KiB, -n) with wb_version  completes the conversation cleanly; a
//	                                                           wirebench server answers wb_version
//	iperf2-header   60-byte 2.1 header (EXTEND)                CLIENTHDRACK and version (if the opening
//	                                                           got none)
//	iperf2-reverse  2.1 header, VERSION2 + REVERSE, 20 ms     the server sends on our connection (-R)
//	iperf2-dual     VERSION1|RUN_NOW, mPort = our listener      the server connects back (-d)
//	echo-tcp/udp    one "!WBE" request (internal/echo)          wirebench
//	iperf2-udp      5 datagrams + FIN (2.1 header at 16)        server report; its layout (modern at 16,
//	                                                           legacy at 12) and counts
//
// Detect runs the tcp-opening step alone and chooses the client dialect for
// the test that follows (the client's --dialect auto): iperf3 for an iperf3
// server, iperf2 for iperf 2.1+ or a wirebench server, iperf2 as a fallback
// when the answer tells nothing (the device dialects cannot be told apart).
//
// The decision logic (Classify*, Summarize and Choose) is pure and tested with canned
// replies; Run does the socket work. Run only talks to the host it is given.
package probe
