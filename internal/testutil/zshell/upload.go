package zshell

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/standin"
)

func (s *Shell) upload(proto string, args []string) {
	async := false
	if !s.legacy() && len(args) > 0 && args[0] == "-a" {
		// 3.x and later: the shell returns at once and the report comes
		// from the upload's thread, around prompt redraws.
		async, args = true, args[1:]
	}
	if len(args) < 1 {
		s.sync(warning, "Not enough parameters.\n")
		s.sync("", "upload - <dest ip> <dest port> <duration> <packet size>[K]\n")
		return
	}
	host, port, secs, size := args[0], "5001", uint64(1), uint64(256)
	if s.o.Iperf3 {
		port = i3DefaultPort
	}
	if len(args) > 1 {
		port = args[1]
		s.sync("", "Remote port is "+port+"\n")
	}
	if ip := net.ParseIP(host); ip == nil {
		// (The 2.x sample has no -a: "-a" is taken for the host.)
		s.sync(warning, "Invalid IPv6 address "+host+"\n")
		s.sync(warning, "Invalid IPv4 address "+host+"\n")
		s.sync(warning, "Please specify the IP address of the remote server.\n")
		return
	} else if ip.To4() != nil && !s.modern() {
		// A dual-stack build tries IPv6 first and says so.
		s.sync(warning, "Invalid IPv6 address "+host+"\n")
	}
	s.sync("", "Connecting to "+host+"\n")
	if len(args) > 2 {
		secs, _ = strconv.ParseUint(args[2], 10, 64)
	}
	if len(args) > 3 {
		size = s.parseNumber(args[3])
	}
	rate := uint64(10)
	if len(args) > 4 {
		rate = (s.parseNumber(args[4]) + s.kilo() - 1) / s.kilo()
		if proto == "tcp" && s.modern() {
			s.sync(warning, "TCP upload will ignore <baud rate> argument\n")
		}
	}
	s.sync("", "Duration:\t"+usec(int64(secs)*1e6)+"\n")
	s.sync("", fmt.Sprintf("Packet size:\t%d bytes\n", size))
	s.sync("", fmt.Sprintf("Rate:\t\t%d kbps\n", rate))
	s.sync("", "Starting...\n")
	addr := net.JoinHostPort(host, port)
	d := time.Duration(secs) * time.Second
	ctx, cancel := context.WithTimeout(s.ctx, d+time.Minute)
	out := s.sync
	if async {
		out = s.async
	}
	if s.o.Iperf3 && proto == "tcp" {
		p, _ := strconv.Atoi(port)
		run := func() { defer cancel(); s.upload3(ctx, proto, host, p, d, int(size), 0, out) }
		if async {
			go run()
		} else {
			run()
		}
		return
	}
	if proto == "tcp" {
		run := func() { defer cancel(); s.tcpUpload(ctx, addr, d, int(size), out) }
		if async {
			go run()
		} else {
			run()
		}
		return
	}
	s.sync("", "Rate:\t\t"+s.kbps(rate)+"\n")
	if !s.legacy() {
		pd := size * 8 * 1e6 / max(rate*s.kilo(), 1)
		if pd > 1000 {
			s.sync("", fmt.Sprintf("Packet duration %d ms\n", pd/1000))
		} else {
			s.sync("", fmt.Sprintf("Packet duration %d us\n", pd))
		}
	}
	run := func() { defer cancel(); s.udpUpload(ctx, addr, d, int(size), float64(rate*s.kilo()), out) }
	if s.o.Iperf3 {
		p, _ := strconv.Atoi(port)
		run = func() { defer cancel(); s.upload3(ctx, proto, host, p, d, int(size), float64(rate*s.kilo()), out) }
	}
	if async {
		go run()
	} else {
		run()
	}
}

// udpUpload runs the UDP client and prints its report through out (sync,
// or async for -a), one shell_fprintf at a time.
func (s *Shell) udpUpload(ctx context.Context, addr string, d time.Duration, size int, bps float64, out func(c, text string)) {
	run := standin.ZperfOldUDPClient
	if s.modern() {
		run = standin.ZperfNewUDPClient
	}
	start := time.Now()
	res, err := run(ctx, addr, standin.UDPClientOptions{Duration: d, RateBps: bps, Length: size})
	el := time.Since(start)
	if err != nil {
		out(errorC, "UDP upload failed (-5)\n")
		return
	}
	var c Counted
	c.Proto, c.Role = "udp", "client"
	out("", "-\nUpload completed!\n")
	rp := res.Report
	if rp != nil {
		us := int64(rp.StopSec)*1e6 + int64(rp.StopUsec)
		c.Bytes, c.Duration = int64(rp.TotalLen()), time.Duration(us)*time.Microsecond
		c.Packets, c.Lost, c.OutOfOrder = int64(rp.Datagrams), int64(rp.ErrorCnt), int64(rp.OutOrderCnt)
		c.JitterUS = int64(rp.Jitter1)*1e6 + int64(rp.Jitter2)
	}
	serverKbps := s.rateKbps(c.Bytes, c.Duration)
	if serverKbps == 0 {
		out(errorC, "LAST PACKET NOT RECEIVED!!!\n")
	}
	out("", "Statistics:\t\tserver\t(client)\n")
	for _, chunk := range []string{"Duration:\t\t", usec(c.Duration.Microseconds()), "\t(", usec(el.Microseconds()), ")\n"} {
		out("", chunk) // print_number is a call of its own
	}
	out("", fmt.Sprintf("Num packets:\t\t%d\t(%d)\n", c.Packets, res.DataPackets))
	out("", fmt.Sprintf("Num packets out order:\t%d\n", c.OutOfOrder))
	out("", fmt.Sprintf("Num packets lost:\t%d\n", c.Lost))
	for _, chunk := range []string{"Jitter:\t\t\t", usec(c.JitterUS), "\n", "Rate:\t\t\t", s.kbps(serverKbps), "\t(", s.kbps(s.rateKbps(res.DataBytes, el)), ")\n"} {
		out("", chunk)
	}
	s.count(c)
}

// tcpUpload runs the TCP client and prints its report through out.
func (s *Shell) tcpUpload(ctx context.Context, addr string, d time.Duration, size int, out func(c, text string)) {
	start := time.Now()
	res, err := standin.ZperfTCPClient(ctx, addr, standin.TCPClientOptions{Duration: d, WriteLen: size})
	el := time.Since(start)
	if err != nil {
		out(errorC, "TCP upload failed (-111)\n")
		return
	}
	c := Counted{Proto: "tcp", Role: "client", Bytes: int64(res.Writes) * int64(size), Duration: el, Packets: res.Writes}
	out("", "-\nUpload completed!\n")
	out("", "Duration:\t")
	out("", usec(el.Microseconds()))
	out("", "\n")
	out("", fmt.Sprintf("Num packets:\t%d\n", res.Writes))
	out("", "Num errors:\t0 (retry or fail)\n")
	out("", "Rate:\t\t")
	out("", s.kbps(s.rateKbps(int64(res.Writes)*int64(size), el)))
	out("", "\n")
	s.count(c)
}
