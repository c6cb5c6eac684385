package zshell

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/session/iperf3"
	"github.com/wirebench/wirebench/internal/units"
)

// The iperf3 mode (Options.Iperf3): a zperf built with
// CONFIG_NET_ZPERF_IPERF3. The shell commands and the reports printed are
// those of the iPerf 2 build (the shell's callbacks print both); what
// changes is the wire, here wirebench's own iperf3 server and client
// (internal/session) as the device's engine, and the default port, 5201.
// As zperf_iperf3_server.c, one listener serves both protocols: "zperf tcp
// download" and "zperf udp download" each enable theirs on it, and it
// closes when both are stopped. Unlike the real server this stand-in does
// not refuse -R, --bidir, -P, -O or a protocol not enabled; it does take
// one test at a time (a second is told the server is busy).

// i3Server is the shared iperf3 listener of the iperf3 mode.
type i3Server struct {
	port    string
	enabled map[string]bool // by protocol
	cancel  context.CancelFunc
	done    chan struct{}
}

const i3DefaultPort = "5201"

// download3 is "zperf tcp|udp download [port|stop]" in the iperf3 mode.
func (s *Shell) download3(proto string, args []string) {
	P := map[string]string{"tcp": "TCP", "udp": "UDP"}[proto]
	port := i3DefaultPort
	if len(args) > 0 {
		port = args[0]
	}
	s.smu.Lock()
	srv := s.i3
	s.smu.Unlock()
	if port == "stop" {
		if srv == nil || !srv.enabled[proto] {
			s.sync(warning, P+" server not running!\n")
			return
		}
		s.smu.Lock()
		delete(srv.enabled, proto)
		last := len(srv.enabled) == 0
		if last {
			s.i3 = nil
		}
		s.smu.Unlock()
		if last {
			srv.cancel()
			<-srv.done
		}
		s.sync("", P+" server stopped\n")
		return
	}
	if srv != nil && srv.enabled[proto] {
		s.sync(warning, P+" server already started!\n")
		return
	}
	if srv != nil && srv.port != port {
		s.sync(errorC, "Failed to start "+P+" server!\n")
		return
	}
	s.log("Binding to 127.0.0.1")
	s.log("Listening on port " + port)
	if srv == nil {
		var err error
		if srv, err = s.listen3(port); err != nil {
			s.sync(errorC, "Failed to start "+P+" server!\n")
			return
		}
	}
	s.smu.Lock()
	srv.enabled[proto] = true
	s.i3 = srv
	s.smu.Unlock()
	s.sync("", P+" server started on port "+port+"\n")
}

// listen3 opens the shared listener: wirebench's server on port, answering
// iperf3 there (one test at a time), its reports printed as zperf's.
func (s *Shell) listen3(port string) (*i3Server, error) {
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(s.ctx)
	srv := &i3Server{port: port, enabled: map[string]bool{}, cancel: cancel, done: make(chan struct{})}
	cfg := session.ServerConfig{Bind: "127.0.0.1", Port: p, MaxTests: 1, IdleTimeout: 5 * time.Second,
		OnResult: func(_ int, r *result.Result) { s.report3(r) }}
	ls, err := iperf2.Listen(ctx, cfg)
	if err != nil {
		cancel()
		return nil, err
	}
	if _, err := iperf3.Enable(ctx, ls, iperf3.Config{}); err != nil {
		cancel()
		return nil, err
	}
	go func() { defer close(srv.done); _ = ls.Serve(ctx) }()
	return srv, nil
}

// report3 prints a finished test as zperf's shell does for a download
// session, one shell_fprintf at a time around prompt redraws.
func (s *Shell) report3(r *result.Result) {
	rc := r.Receiver
	if rc == nil {
		return
	}
	if r.Error != "" {
		s.async(errorC, map[bool]string{true: "UDP", false: "TCP"}[r.Test.Protocol == result.UDP]+" session error.\n")
		return
	}
	d := time.Duration(rc.Seconds * float64(time.Second))
	if r.Test.Protocol != result.UDP {
		c := Counted{Proto: "tcp", Role: "server", Bytes: rc.Bytes, Duration: d}
		for _, chunk := range []string{"New TCP session started.\n", "TCP session ended\n",
			" Duration:\t\t", usec(d.Microseconds()), "\n",
			" rate:\t\t\t", s.kbps(s.rateKbps(c.Bytes, d)), "\n"} {
			s.async("", chunk)
		}
		s.count(c)
		return
	}
	c := Counted{Proto: "udp", Role: "server", Bytes: rc.Bytes, Duration: d, Packets: rc.Packets,
		Lost: rc.Lost, OutOfOrder: rc.OutOfOrder, JitterUS: int64(rc.JitterMS * 1000)}
	for _, chunk := range []string{"New session started.\n", "End of session!\n",
		" duration:\t\t", usec(d.Microseconds()), "\n",
		fmt.Sprintf(" received packets:\t%d\n", c.Packets),
		fmt.Sprintf(" nb packets lost:\t%d\n", c.Lost),
		fmt.Sprintf(" nb packets outorder:\t%d\n", c.OutOfOrder),
		" jitter:\t\t\t", usec(c.JitterUS), "\n",
		" rate:\t\t\t", s.kbps(s.rateKbps(c.Bytes, d)), "\n"} {
		s.async("", chunk)
	}
	s.count(c)
}

// upload3 runs an upload in the iperf3 mode with wirebench's iperf3
// client and prints zperf's upload report through out.
func (s *Shell) upload3(ctx context.Context, proto, host string, port int, d time.Duration, size int, bps float64, out func(c, text string)) {
	cfg := session.ClientConfig{Host: host, Port: port, UDP: proto == "udp", Duration: d, Length: size, Dialect: session.DialectIperf3}
	if cfg.UDP {
		cfg.Rate = units.Rate{Value: bps}
	}
	start := time.Now()
	r, err := dialect.RunClient(ctx, cfg)
	el := time.Since(start)
	if err != nil || r == nil || r.Sender == nil {
		if proto == "udp" {
			out(errorC, "UDP upload failed (-5)\n")
		} else {
			out(errorC, "TCP upload failed (-111)\n")
		}
		return
	}
	out("", "-\nUpload completed!\n")
	if proto == "tcp" {
		writes := r.Sender.Bytes / int64(max(size, 1))
		c := Counted{Proto: "tcp", Role: "client", Bytes: writes * int64(size), Duration: el, Packets: writes}
		for _, chunk := range []string{"Duration:\t", usec(el.Microseconds()), "\n",
			fmt.Sprintf("Num packets:\t%d\n", writes), "Num errors:\t0 (retry or fail)\n",
			"Rate:\t\t", s.kbps(s.rateKbps(c.Bytes, el)), "\n"} {
			out("", chunk)
		}
		s.count(c)
		return
	}
	c := Counted{Proto: "udp", Role: "client"}
	if rc := r.Receiver; rc != nil {
		c.Bytes, c.Duration = rc.Bytes, time.Duration(rc.Seconds*float64(time.Second))
		c.Packets, c.JitterUS = rc.Packets, int64(rc.JitterMS*1000)
		// Like iPerf 2's report, datagrams lost after the last one the
		// server received count as lost; iperf3 has no out-of-order count
		// for the client to print.
		c.Lost = max(rc.Lost, r.Sender.Packets-rc.Packets)
	}
	serverKbps := s.rateKbps(c.Bytes, c.Duration)
	if serverKbps == 0 {
		out(errorC, "LAST PACKET NOT RECEIVED!!!\n")
	}
	out("", "Statistics:\t\tserver\t(client)\n")
	for _, chunk := range []string{"Duration:\t\t", usec(c.Duration.Microseconds()), "\t(", usec(el.Microseconds()), ")\n"} {
		out("", chunk)
	}
	out("", fmt.Sprintf("Num packets:\t\t%d\t(%d)\n", c.Packets, r.Sender.Packets))
	out("", "Num packets out order:\t0\n")
	out("", fmt.Sprintf("Num packets lost:\t%d\n", c.Lost))
	for _, chunk := range []string{"Jitter:\t\t\t", usec(c.JitterUS), "\n", "Rate:\t\t\t", s.kbps(serverKbps), "\t(", s.kbps(s.rateKbps(r.Sender.Bytes, el)), ")\n"} {
		out("", chunk)
	}
	s.count(c)
}
