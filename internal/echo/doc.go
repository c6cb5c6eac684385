// Package echo is wirebench's request/response latency service and its
// probers.
//
// The server side answers echo requests on the wirebench server's own port,
// TCP and UDP, next to iperf2 (see session.Server.AddTCPProtocol and
// AddUDPProtocol): a connection or a new UDP source whose first bytes are
// the magic "!WBE" belongs to this package. Register adds both protocols to
// a server. A UDP request gets one reply datagram; a TCP connection gets
// every request back on the same stream. Both are bounded: a UDP source that
// sends nothing for the idle timeout (or says bye) is forgotten, and a TCP
// connection ends on EOF, on a bye message or after the idle timeout.
//
// The client side measures (Run):
//   - "udp": one request datagram at a time, RTT from write to reply;
//   - "tcp": one request at a time on one TCP connection;
//   - "connect": the time of a TCP three-way handshake to the port (the
//     connection is then closed with a bye message, so the server logs
//     nothing).
//
// RTTs go into an HDR histogram (3 significant digits, 1 ns to 60 s); the
// stats.RTTRecorder.Summary gives exact min, max, mean and standard deviation, and percentiles
// from the histogram (within 0.1 %).
//
// UnderLoad runs a light probe (UDP echo, or ICMP through internal/ping)
// for a short idle period and then beside a load function such as a
// throughput test, and reports both distributions: the loaded one shows the
// queueing delay the load adds (bufferbloat).
package echo
