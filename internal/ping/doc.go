// Package ping sends ICMP echo requests of chosen sizes and measures what
// comes back: round-trip times (from kernel receive timestamps where the
// socket gives them), loss, corrupted payloads, duplicates and late replies,
// per payload size. It also searches for the largest datagram a host can
// reassemble and answer (the reassembly probe).
//
// Sockets come from golang.org/x/net/icmp: a raw socket (ip4:icmp,
// ip6:ipv6-icmp; needs root or CAP_NET_RAW) or an unprivileged ICMP datagram
// socket (udp4/udp6; needs net.ipv4.ping_group_range to include the caller's
// group). Open tries one and then the other and records which it got in
// result.PingSocket. The socket is reached through the Conn interface, so tests can
// put a fake in its place.
//
// Percentiles are exact nearest-rank values over the sorted samples of one
// size (a ping run has tens to thousands of samples, where a histogram's
// bucket error would be larger than the spread being measured).
package ping
