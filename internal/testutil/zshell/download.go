package zshell

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/standin"
)

// download answers "zperf udp|tcp download [port|stop]": it starts (or
// stops) a server of the stand-ins that reports each session it counts.
func (s *Shell) download(proto string, args []string) {
	P := strings.ToUpper(proto)
	port := "5001"
	if len(args) > 0 {
		port = args[0]
	}
	s.smu.Lock()
	running := s.servers[proto]
	s.smu.Unlock()
	if port == "stop" && !s.legacy() {
		if running == nil {
			s.sync(warning, P+" server not running!\n")
			return
		}
		s.stop(proto)
		s.sync("", P+" server stopped\n")
		return
	}
	if port == "stop" {
		port = "0" // the 2.x sample has no stop: strtoul("stop") is 0
	}
	if running != nil {
		select { // a server between two sessions is back before it answers
		case <-running.ready:
		case <-time.After(2 * time.Second):
		}
		s.sync(warning, P+" server already started!\n")
		return
	}
	if s.legacy() {
		s.sync("", "Binding to 127.0.0.1\n")
		s.sync("", "Listening on port "+port+"\n")
	} else {
		s.log("Binding to 127.0.0.1")
		s.log("Listening on port " + port)
	}
	srv := &server{port: port, done: make(chan struct{}), ready: make(chan struct{})}
	ctx, cancel := context.WithCancel(s.ctx)
	srv.cancel = cancel
	up := make(chan error, 1)
	go s.serve(ctx, proto, srv, up)
	if err := <-up; err != nil {
		cancel()
		s.sync(errorC, "Failed to start "+P+" server!\n")
		return
	}
	s.smu.Lock()
	s.servers[proto] = srv
	s.smu.Unlock()
	s.sync("", P+" server started on port "+port+"\n")
}

// serve runs one stand-in session after another on the port until ctx
// ends; up gets the first listen's error.
func (s *Shell) serve(ctx context.Context, proto string, srv *server, up chan<- error) {
	defer close(srv.done)
	addr := "127.0.0.1:" + srv.port
	first := true
	for ctx.Err() == nil {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		var wait func() (Counted, bool)
		var err error
		if proto == "udp" {
			wait, err = s.udpServer(sctx, addr)
		} else {
			wait, err = s.tcpServer(sctx, addr)
		}
		if first {
			up <- err
			first = false
			close(srv.ready)
		}
		if err != nil {
			cancel()
			if ctx.Err() == nil {
				time.Sleep(50 * time.Millisecond) // the port is being released
			}
			continue
		}
		c, ok := wait()
		cancel()
		if ok {
			s.count(c)
		}
	}
}

func (s *Shell) udpServer(ctx context.Context, addr string) (func() (Counted, bool), error) {
	open := standin.ZperfOldUDPServer
	if s.modern() {
		open = standin.ZperfNewUDPServer
	}
	srv, err := open(ctx, addr, standin.UDPServerOptions{FramesPerSecond: s.o.FramesPerSecond})
	if err != nil {
		return nil, err
	}
	return func() (Counted, bool) {
		res, err := srv.Wait()
		if err != nil || !res.Completed {
			if ctx.Err() == nil {
				s.async(errorC, "UDP session error.\n")
			}
			return Counted{}, false
		}
		c := Counted{Proto: "udp", Role: "server", Bytes: int64(res.Bytes), Duration: res.Duration, Packets: res.Counted,
			Lost: int64(res.Lost), OutOfOrder: int64(res.OutOfOrder), JitterUS: res.JitterUS}
		lost, ooo := c.Lost, c.OutOfOrder
		if s.legacy() {
			// The 2.x sample prints each under the other's name.
			lost, ooo = ooo, lost
		}
		// One shell_fprintf at a time, each redrawing the prompt.
		for _, chunk := range []string{"New session started.\n", "End of session!\n",
			" duration:\t\t", usec(res.Duration.Microseconds()), "\n",
			fmt.Sprintf(" received packets:\t%d\n", c.Packets),
			fmt.Sprintf(" nb packets lost:\t%d\n", lost),
			fmt.Sprintf(" nb packets outorder:\t%d\n", ooo),
			" jitter:\t\t\t", usec(c.JitterUS), "\n",
			" rate:\t\t\t", s.kbps(s.rateKbps(c.Bytes, c.Duration)), "\n"} {
			s.async("", chunk)
		}
		return c, true
	}, nil
}

func (s *Shell) tcpServer(ctx context.Context, addr string) (func() (Counted, bool), error) {
	srv, err := standin.TCPSink(ctx, addr, standin.TCPServerOptions{Idle: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	return func() (Counted, bool) {
		res, err := srv.Wait()
		if err != nil {
			if ctx.Err() == nil {
				s.async(errorC, "TCP session error.\n")
			}
			return Counted{}, false
		}
		c := Counted{Proto: "tcp", Role: "server", Bytes: res.Bytes, Duration: res.Duration}
		for _, chunk := range []string{"New TCP session started.\n", "TCP session ended\n",
			" Duration:\t\t", usec(res.Duration.Microseconds()), "\n",
			" rate:\t\t\t", s.kbps(s.rateKbps(c.Bytes, c.Duration)), "\n"} {
			s.async("", chunk)
		}
		return c, true
	}, nil
}

// count sends c on Counted unless nobody reads it.
func (s *Shell) count(c Counted) {
	select {
	case s.Counted <- c:
	default:
	}
}

func (s *Shell) stop(proto string) {
	s.smu.Lock()
	srv := s.servers[proto]
	delete(s.servers, proto)
	s.smu.Unlock()
	if srv != nil {
		srv.cancel()
		<-srv.done
	}
}

func (s *Shell) stopAll() {
	s.stop("udp")
	s.stop("tcp")
	s.smu.Lock()
	i3 := s.i3
	s.i3 = nil
	s.smu.Unlock()
	if i3 != nil {
		i3.cancel()
		<-i3.done
	}
}
