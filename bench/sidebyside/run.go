package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// Loopback is the only address the bench sends to.
const Loopback = "127.0.0.1"

// Tool names.
const (
	Wirebench = "wirebench"
	Iperf2    = "iperf2"
	Iperf3    = "iperf3"
)

// Params is one test: UDP at a rate and datagram size, or TCP with a
// number of streams, for Seconds.
type Params struct {
	UDP     bool
	Length  int     // UDP payload, bytes
	PPS     float64 // UDP rate in datagrams/s; 0: BPS
	BPS     float64 // UDP rate in bit/s of payload, when PPS is 0
	Streams int     // TCP streams
	// UDPStreams is how many UDP streams share the rate (-P); 0 or 1:
	// one. PPS and BPS are then the sum over the streams.
	UDPStreams int
	Seconds    int
}

// udpStreams is the number of UDP streams, at least 1.
func (p Params) udpStreams() int { return max(p.UDPStreams, 1) }

// rateBPS is the UDP rate in bit/s of payload.
func (p Params) rateBPS() float64 {
	if p.PPS > 0 {
		return p.PPS * float64(p.Length*8)
	}
	return p.BPS
}

// Tool is one of the three programs under test and how to drive it.
type Tool struct {
	Name string
	Bin  string
}

// serverArgs starts a server that ends after one test (wirebench -1,
// iperf3 -1, iperf 2 -P with the number of connections), so its output
// is complete and its CPU time counted when it exits.
func (t Tool) serverArgs(port int, p Params) []string {
	ps := strconv.Itoa(port)
	switch t.Name {
	case Wirebench:
		if p.UDP && p.udpStreams() > 1 {
			// Streams without a test header (short datagrams) are
			// tests of their own, and -1 would end the server with
			// the first: runTest stops it once every stream's result
			// is out.
			return []string{"server", "--json", "-B", Loopback, "-p", ps, "--iperf3-port", "0"}
		}
		return []string{"server", "-1", "--json", "-B", Loopback, "-p", ps, "--iperf3-port", "0"}
	case Iperf2:
		a := []string{"-s", "-B", Loopback, "-p", ps, "-y", "C", "-P", strconv.Itoa(max(p.Streams, p.UDPStreams, 1))}
		if p.UDP {
			a = append(a, "-u")
		}
		return a
	default:
		return []string{"-s", "-1", "-B", Loopback, "-p", ps}
	}
}

// clientArgs runs the client of one test. Rates go in plain bit/s (iperf
// 2 reads "M" as 2^20) or, where the tool has them, datagrams/s; iperf3
// has no packet rate, so it gets the same rate in bit/s.
func (t Tool) clientArgs(port int, p Params) []string {
	ps, secs := strconv.Itoa(port), strconv.Itoa(p.Seconds)
	var a []string
	switch t.Name {
	case Wirebench:
		a = []string{"client", Loopback, "-p", ps, "-t", secs, "--json"}
	case Iperf2:
		a = []string{"-c", Loopback, "-p", ps, "-t", secs, "-y", "C"}
	default:
		a = []string{"-c", Loopback, "-p", ps, "-t", secs, "-J"}
	}
	if !p.UDP {
		return append(a, "-P", strconv.Itoa(max(p.Streams, 1)))
	}
	// wirebench's -b is the sum over its streams, iperf's each stream's.
	share := 1.0
	if n := p.udpStreams(); n > 1 {
		a = append(a, "-P", strconv.Itoa(n))
		if t.Name != Wirebench {
			share = float64(n)
		}
	}
	rate := strconv.FormatFloat(p.rateBPS()/share, 'f', 0, 64)
	if p.PPS > 0 && t.Name != Iperf3 {
		rate = strconv.FormatFloat(p.PPS/share, 'f', 0, 64) + "pps"
	}
	return append(a, "-u", "-l", strconv.Itoa(p.Length), "-b", rate)
}

// parse reads one test's outputs.
func (t Tool) parse(client, server []byte, p Params) (Counts, error) {
	switch t.Name {
	case Wirebench:
		if p.UDP && p.udpStreams() > 1 {
			return parseWirebenchStreams(client, server, p.udpStreams())
		}
		return parseWirebench(client, server)
	case Iperf2:
		if p.UDP && p.udpStreams() > 1 {
			return parseIperf2UDPStreams(client, server, p.Length, p.udpStreams())
		}
		if p.UDP {
			return parseIperf2UDP(client, server, p.Length)
		}
		return parseIperf2TCP(server)
	default:
		return parseIperf3(client, p.UDP)
	}
}

// procs are the processes running now, killed by PID if the bench is
// interrupted.
var procs = struct {
	sync.Mutex
	m map[int]*os.Process
}{m: map[int]*os.Process{}}

func track(p *os.Process) {
	procs.Lock()
	procs.m[p.Pid] = p
	procs.Unlock()
}

func untrack(p *os.Process) {
	procs.Lock()
	delete(procs.m, p.Pid)
	procs.Unlock()
}

// killAll kills every process the bench started that still runs.
func killAll() {
	procs.Lock()
	defer procs.Unlock()
	for pid, p := range procs.m {
		_ = p.Kill()
		delete(procs.m, pid)
	}
}

// syncBuffer is a bytes.Buffer the process writes while the bench reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// Bytes is a copy of what was written so far.
func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

func (s *syncBuffer) String() string { return string(s.Bytes()) }

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

// proc is a started process with its output.
type proc struct {
	cmd    *exec.Cmd
	out    syncBuffer
	errb   bytes.Buffer
	done   chan struct{}
	cancel context.CancelFunc
}

// start runs bin with args, killed when limit has passed.
func start(bin string, args []string, limit time.Duration) (*proc, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	p := &proc{cmd: exec.CommandContext(ctx, bin, args...), done: make(chan struct{}), cancel: cancel}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errb
	p.cmd.WaitDelay = time.Second
	if err := p.cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	track(p.cmd.Process)
	go func() {
		_ = p.cmd.Wait()
		untrack(p.cmd.Process)
		cancel()
		close(p.done)
	}()
	return p, nil
}

// stop waits up to grace for the process to end by itself, then kills
// it by its PID, and waits for it.
func (p *proc) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// waitStreams waits up to limit for a wirebench server to print the
// results of n streams (wbStreamsCovered).
func waitStreams(srv *proc, n int, limit time.Duration) {
	end := time.Now().Add(limit)
	for time.Now().Before(end) && wbStreamsCovered(srv.out.Bytes()) < n {
		select {
		case <-srv.done:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// cpu is the user and system time the ended process used.
func (p *proc) cpu() float64 {
	st := p.cmd.ProcessState
	if st == nil {
		return 0
	}
	return (st.UserTime() + st.SystemTime()).Seconds()
}

// freePort returns a loopback port that is free for both TCP and UDP now.
func freePort() (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", net.JoinHostPort(Loopback, "0"))
		if err != nil {
			return 0, fmt.Errorf("finding a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", net.JoinHostPort(Loopback, strconv.Itoa(port)))
		l.Close()
		if err == nil {
			u.Close()
			return port, nil
		}
	}
	return 0, errors.New("no port free for both TCP and UDP in 20 tries")
}

// bound reports whether something holds port on the loopback address:
// binding it fails. (A probe connection would count as a test.)
func bound(port int, udp bool) bool {
	addr := net.JoinHostPort(Loopback, strconv.Itoa(port))
	if udp {
		c, err := net.ListenPacket("udp", addr)
		if err != nil {
			return true
		}
		c.Close()
		return false
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return true
	}
	l.Close()
	return false
}

// waitBound waits until the server holds its port, up to 5 s, or until it
// ended.
func waitBound(srv *proc, port int, udp bool) error {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-srv.done:
			return fmt.Errorf("the server exited before listening: %s", bytes.TrimSpace(append(srv.out.Bytes(), srv.errb.Bytes()...)))
		default:
		}
		if bound(port, udp) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("the server did not listen on port %d within 5 s", port)
}

// Run is one test of one tool: its counts and the CPU time of its
// client and server.
type Run struct {
	Counts
	CPUSeconds float64
}

// runTest runs a server and a client of tool t for one test on a fresh
// loopback port. Every process is bounded in time (the test plus 20 s)
// and killed by PID if it outlives it.
func runTest(t Tool, p Params) (Run, error) {
	port, err := freePort()
	if err != nil {
		return Run{}, err
	}
	limit := time.Duration(p.Seconds)*time.Second + 20*time.Second
	srv, err := start(t.Bin, t.serverArgs(port, p), limit)
	if err != nil {
		return Run{}, err
	}
	defer srv.stop(0)
	// iperf 2's UDP server has only its UDP socket; the others listen on
	// TCP (wirebench on both).
	if err := waitBound(srv, port, t.Name == Iperf2 && p.UDP); err != nil {
		return Run{}, fmt.Errorf("%s server: %w", t.Name, err)
	}
	cl, err := start(t.Bin, t.clientArgs(port, p), limit)
	if err != nil {
		return Run{}, err
	}
	<-cl.done
	if t.Name == Wirebench && p.UDP && p.udpStreams() > 1 {
		// This server does not end by itself (serverArgs): stop it
		// once it has printed every stream's result.
		waitStreams(srv, p.udpStreams(), 5*time.Second)
		srv.stop(0)
	}
	// The servers end after their one test; iperf 2 may take a moment
	// to print its report.
	srv.stop(3 * time.Second)
	if cl.cmd.ProcessState != nil && !cl.cmd.ProcessState.Success() && cl.out.Len() == 0 {
		return Run{}, fmt.Errorf("%s client: %v: %s", t.Name, cl.cmd.ProcessState, bytes.TrimSpace(cl.errb.Bytes()))
	}
	c, err := t.parse(cl.out.Bytes(), srv.out.Bytes(), p)
	if err != nil {
		return Run{}, fmt.Errorf("%s: %w (client stderr: %s)", t.Name, err, bytes.TrimSpace(cl.errb.Bytes()))
	}
	return Run{Counts: c, CPUSeconds: cl.cpu() + srv.cpu()}, nil
}
