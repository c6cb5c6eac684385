// Package standin provides stand-in peers for the iperf2 dialects that cannot
// be installed on a test machine: iperf 2.0.5, old and new Zephyr zperf, lwIP
// lwiperf and ESP-IDF iperf.
//
// Every stand-in is written byte for byte from the interop notes in
// docs/wire-protocols.md (cited as §n below), with encoding/binary, and on
// purpose independently of wirebench's own codec (internal/wire/...): the
// stand-ins check that codec from the outside. Where the notes are silent the
// behaviour was taken from the peer's source and is marked [S], or inferred
// and marked [I].
//
// Each stand-in takes a context, which must carry a deadline, and a loopback
// address. Clients run to completion and return a result struct with what they
// sent (counts, ids, the impairments actually injected) and what they observed
// (raw reply bytes, the report parsed the way that peer parses it). Servers
// start listening at once and return a *Server handle: Addr gives the bound
// address, Wait the result (what was counted, the exact reply bytes sent).
//
// Every loop is bounded in count (Options.MaxPackets, fixed retry counts) and
// in time (the context deadline, fixed waits). The package is for tests and
// must only ever be pointed at loopback or lab-namespace addresses.
//
// Layouts used throughout (all big-endian unless noted):
//
//	UDP datagram, legacy (12-byte) header      UDP datagram, modern (16-byte) header
//	 0  id (int32)                              0  id (low 32 bits)
//	 4  tv_sec                                  4  tv_sec
//	 8  tv_usec                                 8  tv_usec
//	12  client_hdr_v1 (24 bytes)               12  id2 (high 32 bits)
//	                                           16  client_hdr_v1 (24 bytes)
//
//	client_hdr_v1 (§1.2)                        server report (§1.5), at 12 or 16
//	 0  flags                                   0  flags          20  error_cnt
//	 4  numThreads                              4  total_len1     24  outorder_cnt
//	 8  mPort                                   8  total_len2     28  datagrams
//	12  mBufLen                                12  stop_sec       32  jitter1
//	16  mWinBand                               16  stop_usec      36  jitter2
//	20  mAmount (int32; <0: -duration/10ms)
package standin
