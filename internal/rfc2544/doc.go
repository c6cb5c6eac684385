// Package rfc2544 runs RFC 2544's benchmarks (throughput, latency, frame
// loss rate and back-to-back frames) over ordinary UDP sockets, per
// datagram size, against a far end reached through a sweep.Runner (a
// reflector, a wirebench server, an iperf 2 server).
//
// Throughput is one multi-rate search per size (sweep.SearchTargets over
// internal/mlrsearch) under two criteria at once: no loss allowed (NDR) and
// up to Config.PDRPercent lost (PDR); its trials grow from
// Config.Schedule.Search to Config.Schedule.Confirm as its intervals
// narrow, and each rate is confirmed by a trial of the full length. The
// rates are what the far end delivered, under sweep's sustained-rate rules
// (its queue grew by at most 0.5 % of a trial).
//
// Latency is measured at shares of the NDR (10, 50, 90 and 100 %), every
// datagram's round trip timed from the time stamped in it to its kernel
// receive time, into an HDR histogram. Frame loss is measured from the
// medium's maximum rate down in 10 % steps until two steps in a row lose
// nothing. Back-to-back sends bursts paced at the medium's line rate and
// finds by bisection the longest one the far end carries without loss.
package rfc2544
