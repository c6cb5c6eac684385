package report

import (
	"math"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// line is one interval line as a caller prints it while a test runs.
type line struct {
	id        string
	in        result.Interval
	receiving bool
}

// scenario is one test as the CLI would render it.
type scenario struct {
	name        string
	r           *result.Result
	local, peer string
	listenPort  int      // a server prints its listening banner first
	lines       []line   // nil: r.Intervals, id "1", receiving per direction
	mustShow    []string // text the output must contain
}

var started = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func base(role string, test result.Test) *result.Result {
	r := result.New(role)
	r.StartedAt = started
	r.Version = "v0.1.0-test"
	r.Test = test
	return r
}

func udpClientPeerReport() scenario {
	r := base("client", result.Test{
		Protocol: result.UDP, Direction: result.DirSend, Dialect: "iperf2", Host: "127.0.0.1", Port: 5001,
		Peer: "127.0.0.1:5001", Duration: 2, RateBPS: 10e6, RatePPS: 10e6 / (8 * 1470), Length: 1470, Streams: 1, PeerVersion: "2.1.8",
	})
	r.Intervals = []result.Interval{
		{Start: 0, End: 1, Bytes: 1311240, BitsPerSecond: 10489920, Packets: 892},
		{Start: 1, End: 2, Bytes: 1311240, BitsPerSecond: 10489920, Packets: 892},
	}
	r.Sender = &result.Sender{Bytes: 2628600, BitsPerSecond: 10503896.1, Packets: 1788, Seconds: 2.002, PacketsPerSecond: 893.1}
	r.Receiver = &result.Receiver{
		Bytes: 2627130, BitsPerSecond: 10498020.0, Packets: 1787, Lost: 0, OutOfOrder: 0,
		JitterMS: 0.001, Seconds: 2.002, Total: 1787, Source: "peer-report", HostDrops: 0, PacketsPerSecond: 892.6,
	}
	return scenario{name: "udp-client-peer-report", r: r, local: "127.0.0.1:53488", peer: "127.0.0.1:5001",
		mustShow: []string{"Server Report:", "0/1787 (0%)", "Sent 1788 datagrams", "rate 10.0 Mbits/sec (850 pps)"}}
}

func tcpClient() scenario {
	r := base("client", result.Test{
		Protocol: result.TCP, Direction: result.DirSend, Dialect: "iperf2", Host: "198.18.0.2", Port: 5001,
		Duration: 3, Length: 131072, Streams: 1,
	})
	r.Intervals = []result.Interval{
		{Start: 0, End: 1, Bytes: 11796480, BitsPerSecond: 94371840},
		{Start: 1, End: 2, Bytes: 11796480, BitsPerSecond: 94371840},
		{Start: 2, End: 3, Bytes: 11665408, BitsPerSecond: 93323264},
	}
	r.Sender = &result.Sender{Bytes: 35258368, BitsPerSecond: 94022314.7, Seconds: 3}
	return scenario{name: "tcp-client", r: r, local: "198.18.0.1:40212", peer: "198.18.0.2:5001",
		mustShow: []string{"TCP port 5001", "94.4 Mbits/sec", "sender"}}
}

func serverReceive() scenario {
	r := base("server", result.Test{
		Protocol: result.UDP, Direction: result.DirReceive, Dialect: "iperf2", Host: "127.0.0.1", Port: 5001,
		Peer: "127.0.0.1:45018", Duration: 2, RateBPS: 1e6, Length: 1470, Streams: 1, PeerVersion: "2.1.8",
	})
	r.Intervals = []result.Interval{
		{Start: 0, End: 1, Bytes: 125 * 1470, BitsPerSecond: 125 * 1470 * 8, Packets: 125, Lost: 3, OutOfOrder: 1, JitterMS: 0.012},
		// Two datagrams counted lost above arrive late: the interval's running loss is -2.
		{Start: 1, End: 2, Bytes: 128 * 1470, BitsPerSecond: 128 * 1470 * 8, Packets: 128, Lost: -2, OutOfOrder: 2, JitterMS: 0.010},
	}
	r.Receiver = &result.Receiver{
		Bytes: 253 * 1470, BitsPerSecond: 253 * 1470 * 8 / 2.0, Packets: 253, Lost: 1, OutOfOrder: 3, Duplicates: result.Count(2),
		JitterMS: 0.010, Seconds: 2, Total: 254, Source: "local", HostDrops: 1, PacketsPerSecond: 126.5,
	}
	return scenario{name: "server-receive", r: r, local: "127.0.0.1:5001", peer: "127.0.0.1:45018", listenPort: 5001,
		mustShow: []string{"connected with 127.0.0.1 port 45018 (udp, iperf2, peer 2.1.8)", "1/254 (0.39%)", "0/128 (0%)",
			"dropped by this host's socket receive buffer"}}
}

func multiStream() scenario {
	r := base("client", result.Test{
		Protocol: result.UDP, Direction: result.DirSend, Dialect: "iperf2", Host: "127.0.0.1", Port: 5001,
		Duration: 1, RateBPS: 5e6, Length: 1470, Streams: 2,
	})
	r.Intervals = []result.Interval{{Start: 0, End: 1, Bytes: 850 * 1470, BitsPerSecond: 850 * 1470 * 8, Packets: 850}}
	half := func(id int) result.Stream {
		return result.Stream{ID: id,
			Sender:   &result.Sender{Bytes: 425 * 1470, BitsPerSecond: 425 * 1470 * 8, Packets: 425, Seconds: 1, PacketsPerSecond: 425},
			Receiver: &result.Receiver{Bytes: 425 * 1470, BitsPerSecond: 425 * 1470 * 8, Packets: 425, Seconds: 1, Total: 425, JitterMS: 0.02, Source: "peer-report"},
		}
	}
	r.Streams = []result.Stream{half(1), half(2)}
	r.Sender = &result.Sender{Bytes: 850 * 1470, BitsPerSecond: 850 * 1470 * 8, Packets: 850, Seconds: 1, PacketsPerSecond: 850}
	r.Receiver = &result.Receiver{Bytes: 850 * 1470, BitsPerSecond: 850 * 1470 * 8, Packets: 850, Seconds: 1, Total: 850, JitterMS: 0.02, Source: "peer-report"}
	per := result.Interval{Start: 0, End: 1, Bytes: 425 * 1470, BitsPerSecond: 425 * 1470 * 8, Packets: 425}
	return scenario{name: "multi-stream", r: r, local: "127.0.0.1:40001", peer: "127.0.0.1:5001",
		lines:    []line{{id: "1", in: per}, {id: "2", in: per}, {id: "SUM", in: r.Intervals[0]}},
		mustShow: []string{"[SUM]", "2 streams", "[  2] Sent 425 datagrams", "[SUM] Sent 850 datagrams"}}
}

func reverseFlow() scenario {
	r := base("client", result.Test{
		Protocol: result.UDP, Direction: result.DirSend, Dialect: "iperf2-legacy", Host: "127.0.0.1", Port: 5001,
		Duration: 1, RateBPS: 1e6, Length: 1470, Streams: 1, Mode: "dual",
	})
	fwd := result.Interval{Start: 0, End: 1, Bytes: 85 * 1470, BitsPerSecond: 85 * 1470 * 8, Packets: 85, Flow: "forward"}
	rev := result.Interval{Start: 0, End: 1, Bytes: 84 * 1470, BitsPerSecond: 84 * 1470 * 8, Packets: 84, Lost: 1, JitterMS: 0.05, Flow: "reverse"}
	r.Intervals = []result.Interval{fwd, rev}
	r.Sender = &result.Sender{Bytes: 85 * 1470, BitsPerSecond: 85 * 1470 * 8, Packets: 85, Seconds: 1, PacketsPerSecond: 85}
	r.Receiver = &result.Receiver{Bytes: 85 * 1470, BitsPerSecond: 85 * 1470 * 8, Packets: 85, Seconds: 1, Total: 85, JitterMS: 0.03, Source: "peer-report"}
	r.Reverse = &result.Flow{Direction: result.DirReceive,
		Receiver:   &result.Receiver{Bytes: 84 * 1470, BitsPerSecond: 84 * 1470 * 8, Packets: 84, Lost: 1, Seconds: 1, Total: 85, JitterMS: 0.05, Source: "local", HostDrops: -1},
		Intervals:  []result.Interval{rev},
		ListenPort: 40123, // the server is on this host: not its own port 5001
	}
	return scenario{name: "reverse-flow", r: r, local: "127.0.0.1:40002", peer: "127.0.0.1:5001",
		lines:    []line{{id: "1", in: fwd}, {id: "2", in: rev, receiving: true}},
		mustShow: []string{"Reverse flow (this side: receive, to our port 40123)", "1/85 (1.2%)", "mode dual", "reverse"}}
}

// bidirStreams is an iperf3 --bidir -P 2 client: streams 1 and 3 send
// (the server's counts of them are the Server Report), 4 and 5 receive.
func bidirStreams() scenario {
	r := base("client", result.Test{
		Protocol: result.TCP, Direction: result.DirBidir, Dialect: "iperf3", Host: "127.0.0.1", Port: 5201,
		Duration: 1, Length: 131072, Streams: 2, Mode: "bidir",
	})
	snd := func(n int64) *result.Sender {
		return &result.Sender{Bytes: n, BitsPerSecond: float64(n) * 8, Seconds: 1}
	}
	rcv := func(n int64, src string) *result.Receiver {
		return &result.Receiver{Bytes: n, BitsPerSecond: float64(n) * 8, Seconds: 1, Source: src}
	}
	r.Streams = []result.Stream{
		{ID: 1, Sender: snd(1000000), Receiver: rcv(1000000, "peer-report")},
		{ID: 3, Sender: snd(2000000), Receiver: rcv(2000000, "peer-report")},
		{ID: 4, Receiver: rcv(4000000, "local"), Flow: "reverse"},
		{ID: 5, Receiver: rcv(8000000, "local"), Flow: "reverse"},
	}
	r.Sender, r.Receiver = snd(3000000), rcv(3000000, "peer-report")
	r.Reverse = &result.Flow{Direction: result.DirReceive, Receiver: rcv(12000000, "local")}
	return scenario{name: "bidir-streams", r: r, local: "127.0.0.1:40003", peer: "127.0.0.1:5201",
		mustShow: []string{"2 streams each way", "mode bidir",
			"[  1] Server Report:\n[  1] 0.00-1.00   sec   977 KBytes  8.00 Mbits/sec  receiver\n" +
				"[  3] 0.00-1.00   sec  1.91 MBytes  16.0 Mbits/sec  receiver\n" +
				"[SUM] 0.00-1.00   sec  2.86 MBytes  24.0 Mbits/sec  receiver\n[  1] Reverse flow (this side: receive):\n" +
				"[  4] 0.00-1.00   sec  3.81 MBytes  32.0 Mbits/sec  receiver\n" +
				"[  5] 0.00-1.00   sec  7.63 MBytes  64.0 Mbits/sec  receiver\n" +
				"[SUM] 0.00-1.00   sec  11.4 MBytes  96.0 Mbits/sec  receiver\n"}}
}

func warningsError() scenario {
	r := base("client", result.Test{
		Protocol: result.TCP, Direction: result.DirSend, Dialect: "raw", Host: "127.0.0.1", Port: 5001,
		Bytes: 1 << 20, Length: 8192, Streams: 1,
	})
	r.Intervals = []result.Interval{{Start: 0, End: 0.5, Bytes: 524288, BitsPerSecond: 8388608}}
	r.Sender = &result.Sender{Bytes: 524288, BitsPerSecond: 8388608, Seconds: 0.5, SendErrors: 3}
	r.Warn("the peer sent no server report; receiver counts are unknown")
	r.Warn("the send rate fell short of the requested rate\nby 12 % in the last interval")
	r.Error = "connection reset by peer after 0.50 s"
	return scenario{name: "warnings-error", r: r, local: "127.0.0.1:40003", peer: "127.0.0.1:5001",
		mustShow: []string{"WARNING: the peer sent no server report", "WARNING: the send rate fell short", "ERROR: connection reset",
			"3 writes refused by the kernel", "amount 1.00 MBytes"}}
}

func link() scenario {
	r := base("server", result.Test{
		Protocol: result.UDP, Direction: result.DirReceive, Dialect: "iperf2", Host: "198.18.0.2", Port: 5001,
		Peer: "198.18.0.1:50000", Duration: 1, RateBPS: 120e6, Length: 1470, Streams: 1,
	})
	const pps = 8137.0
	r.Intervals = []result.Interval{{Start: 0, End: 1, Bytes: 8137 * 1470, BitsPerSecond: pps * 1470 * 8, Packets: 8137, Lost: 2067, JitterMS: 0.004}}
	r.Receiver = &result.Receiver{Bytes: 8137 * 1470, BitsPerSecond: pps * 1470 * 8, Packets: 8137, Lost: 2067, Seconds: 1, Total: 10204, JitterMS: 0.004, Source: "local", PacketsPerSecond: pps}
	r.Link = &result.Link{Medium: "eth100", TheoreticalBPS: 95.70e6, PercentOfTheoretical: 100 * pps * 1470 * 8 / 95.70e6,
		FramesPerSecond: pps, WireL2BPS: pps * 1516 * 8, WireL1BPS: pps * 1536 * 8,
		Diagnosis: "offered 120 Mbit/s above the line rate: the loss is the shaper's queue overflowing, not the device"}
	r.Warn("offered rate 120 Mbits/sec is above what eth100 carries (95.70 Mbits/sec): loss is expected")
	return scenario{name: "link", r: r, local: "198.18.0.2:5001", peer: "198.18.0.1:50000",
		mustShow: []string{"Link: 95.69 Mbits/sec = 99.99 % of the 95.70 Mbits/sec eth100 allows; 8,137 frames/s; L2 98.69 / L1 99.99 Mbits/sec",
			"Diagnosis: offered", "2067/10204 (20.3%)"}}
}

func guards() scenario {
	nan, inf := math.NaN(), math.Inf(1)
	r := base("client", result.Test{
		Protocol: result.UDP, Direction: result.DirSend, Dialect: "iperf2", Host: "::1", Port: 5001,
		Duration: 0, RateBPS: nan, RatePPS: inf, Length: 1470, Streams: 1,
	})
	r.Intervals = []result.Interval{
		{Start: 0, End: 0, Bytes: 1470, BitsPerSecond: inf, Packets: 1},
		{Start: nan, End: 1, Bytes: 0, BitsPerSecond: nan, Packets: 0, JitterMS: nan},
	}
	r.Sender = &result.Sender{Bytes: 1470, BitsPerSecond: inf, Packets: 1, Seconds: 0, PacketsPerSecond: inf}
	r.Receiver = &result.Receiver{Bytes: 0, BitsPerSecond: nan, Packets: 0, Seconds: 0, JitterMS: math.Inf(-1), Source: "peer-report"}
	r.Link = &result.Link{Medium: "eth100", TheoreticalBPS: 0, PercentOfTheoretical: nan}
	return scenario{name: "guards", r: r, local: "[::1]:40004", peer: "[::1]:5001",
		lines: []line{
			{id: "1", in: r.Intervals[0]}, {id: "1", in: r.Intervals[1]},
			{id: "1", in: r.Intervals[0], receiving: true}, {id: "1", in: r.Intervals[1], receiving: true},
		},
		mustShow: []string{"0/0 (n/a)", "n/a pps", "theoretical goodput n/a", "local ::1 port 40004"}}
}

func scenarios() []scenario {
	return []scenario{udpClientPeerReport(), tcpClient(), serverReceive(), multiStream(), reverseFlow(), bidirStreams(), warningsError(), link(), guards()}
}
