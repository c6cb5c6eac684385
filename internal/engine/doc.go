// Package engine moves traffic: paced UDP senders, UDP receive loops and
// TCP senders and receivers. It counts into stats.Counters and never prints;
// the dialect a test speaks (what goes in each datagram's header, how a
// test starts and ends) is given to it by the session layer as functions,
// so one engine serves iperf2, iperf3 and later sweeps and reflectors.
//
// A datagram's life: session → SendUDP (pacer schedules, Stamp writes the
// header, udpio sends in batches) → wire → ReceiveUDP (udpio reads in
// batches with kernel timestamps) → the session's handler → stats.
package engine
