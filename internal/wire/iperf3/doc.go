// Package iperf3 is the wire codec of the iperf3 control protocol: pure
// encoding, decoding and a state machine over an io.ReadWriter. It opens no
// sockets; sessions (internal/session) own connections, timers and streams.
//
// The byte-level facts come from docs/wire-protocols.md §4
// (verified against iperf3 3.12 on 127.0.0.1; numbers and limits also
// checked in esnet/iperf tags 3.12 and 3.21) and its recommendations in §7.
//
// # Control connection (§4.1)
//
// The client connects (TCP, default port 5201, TCP_NODELAY) and sends a
// 37-byte Cookie. Then one State byte (signed char) at a time moves the test
// along; between some of them a length-prefixed JSON message travels:
//
//	C→S  cookie (36 chars of abcdefghijklmnopqrstuvwxyz234567, NUL)
//	S→C  PARAM_EXCHANGE (9)        or ACCESS_DENIED (-1) when busy
//	C→S  u32 BE length + Params JSON
//	S→C  CREATE_STREAMS (10)       or SERVER_ERROR (-2) + i32 i_errno + i32 errno
//	C→S  data streams: TCP + cookie, or UDP "9876" → "6789"
//	S→C  TEST_START (1), TEST_RUNNING (2)
//	C→S  TEST_END (4)
//	S→C  EXCHANGE_RESULTS (13); C→S Results JSON; S→C Results JSON
//	S→C  DISPLAY_RESULTS (14)
//	C→S  IPERF_DONE (16); both close
//
// Machine validates that sequence for either role (see its diagram); Conn
// reads and writes each element under a context: with a net.Conn the
// context's deadline and cancellation reach blocked reads and writes.
//
// # JSON (§4.2, §4.3)
//
// JSON messages are capped (MaxJSONLen, 1 MiB): a larger length prefix is an
// error and nothing is allocated for it. Params encode with iperf3's own
// presence rule — a boolean key is sent only when true, because servers test
// presence, not value — and decode everything 3.12–3.21 sends, ignoring
// unknown keys. Results decode numbers tolerantly (18446744073709551615 from
// 3.12/3.13 means −1) and keep omitted_errors/omitted_packets as a pair.
//
// # wirebench extension
//
// Between two wirebench peers, extra keys prefixed "wb_" ride along in the
// same messages; iperf3 ignores unknown keys, so the conversation stays valid
// for plain iperf3. The client announces wb_version (plus wb_interval_ms,
// wb_dups, wb_latency) in Params; a wirebench server answers with wb_version,
// wb_agent and wb_streams (per-interval receiver counts, duplicates,
// out-of-order, latency summary) in its Results. See WBParams and WBResults.
// With a shared secret the client adds wb_auth_ts and wb_auth (SecretMAC).
//
// # Authentication
//
// iperf3's RSA authentication (docs/auth.md): EncodeAuthToken and
// DecodeAuthToken make and read the "authtoken" parameter in either padding,
// ParseAuthorizedUsers reads the users file as iperf3 does (more strictly),
// ParseRSAPublicKeyPEM and ParseRSAPrivateKeyPEM read OpenSSL's key files.
// Every failure wraps ErrAuth.
//
// # Data streams (§4.4)
//
// UDPHeader encodes the 12-byte (32-bit sequence) or 16-byte
// (udp_counters_64bit) datagram header. ClassifyUDPReply accepts every form
// of the UDP connect reply seen in the field ("6789", legacy b1 68 de 3a and
// the byte-reversed forms of big-endian hosts).
//
// # -J output
//
// Report and its parts model iperf3's -J document (start, intervals, end with
// streams, sum_sent, sum_received, cpu_utilization_percent) so wirebench can
// print it; the tests decode real iperf3 3.12 output with unknown fields
// disallowed and compare the round trip key by key.
//
// # Errors
//
// Errors wrap sentinels for errors.Is: ErrBadCookie, ErrJSONTooLarge,
// ErrInvalidJSON, ErrBadParams, ErrBadResults, ErrUnknownState,
// ErrUnexpectedState, ErrFinished, ErrAuth. A SERVER_ERROR is a *ServerErr carrying
// iperf3's i_errno (Errno); Params.Validate returns one with the code iperf3
// itself would send.
package iperf3
