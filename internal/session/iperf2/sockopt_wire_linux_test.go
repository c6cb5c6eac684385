package iperf2

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sockopt"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
	"github.com/wirebench/wirebench/internal/testutil/wirecap"
)

// wireCheck is what the packets from one side must show.
type wireCheck struct {
	mss      int // in that side's SYN (or SYN-ACK); 0 = not checked
	tos, ttl int // on its data packets; -1 / 0 = not checked
}

// wireSeen counts the packets from one side: SYNs and packets with
// payload; ended says whether its connection has ended on the wire: a FIN
// from that side or a RST from either (a receiver that closes with data
// unread resets the connection, and the sender then sends no FIN).
func wireSeen(pkts []wirecap.Packet, proto int, from netip.AddrPort, to uint16) (syns, data int, ended bool) {
	for _, p := range pkts {
		if p.Proto != proto {
			continue
		}
		out := p.Src == from && p.Dst.Port() == to
		back := p.Dst == from && p.Src.Port() == to
		if proto == 6 && (out && p.TCPFlags&0x01 != 0 || (out || back) && p.TCPFlags&0x04 != 0) {
			ended = true
		}
		if !out {
			continue
		}
		if p.SYN() {
			syns++
		}
		if p.Payload > 0 {
			data++
		}
	}
	return syns, data, ended
}

// checkOnWire captures on lo the packets to and from the server's port
// while run runs a test from the client port it is given, and checks the
// packets one side sent (from, to: the address of the side and the port it
// sends to, as from(cport), to(cport) give them).
//
// A test on loopback can end before the kernel has passed all of its
// packets to the capture (the receive path runs later on a busy machine),
// so it waits, up to 10 s, until what it checks has arrived: the SYN when
// the MSS is checked, data, and for TCP the connection's end (the side's
// FIN, which follows all of its data, or a RST). When that never arrives and the capture itself lost packets
// (its queue overflowed, or a read was cut short), the capture is at fault,
// not the product: the test runs again, up to 3 times, each logged.
func checkOnWire(t *testing.T, port int, proto int, from func(cport int) netip.AddrPort, to func(cport int) uint16,
	want wireCheck, run func(t *testing.T, cport int)) {
	t.Helper()
	const attempts = 3
	for attempt := 1; ; attempt++ {
		cport := loopback.FreePort(t)
		src, dst := from(cport), to(cport)
		capt := wirecap.Start(t, "lo", uint16(port))
		run(t, cport)
		complete := capt.Wait(10*time.Second, func(pkts []wirecap.Packet) bool {
			syns, data, ended := wireSeen(pkts, proto, src, dst)
			return (want.mss == 0 || syns > 0) && data > 0 && (proto != 6 || ended)
		})
		pkts := capt.Stop()
		st := capt.Stats()
		if st.Drained > 0 || !complete {
			t.Logf("attempt %d: capture read %d packets only when stopped; complete %v; stats %+v", attempt, st.Drained, complete, st)
		}
		if !complete && st.Lost() {
			if attempt < attempts {
				t.Logf("attempt %d: the capture itself lost packets (%+v): running the test again", attempt, st)
				continue
			}
			t.Fatalf("the capture itself lost packets in all %d attempts (last: %+v): nothing to judge the product by", attempts, st)
		}
		checkWire(t, pkts, proto, src, dst, want)
		return
	}
}

// checkWire checks the packets sent from the address from to port to.
func checkWire(t *testing.T, pkts []wirecap.Packet, proto int, from netip.AddrPort, to uint16, want wireCheck) {
	t.Helper()
	var syns, data int
	for _, p := range pkts {
		if p.Proto != proto || p.Src != from || p.Dst.Port() != to {
			continue
		}
		if p.SYN() {
			syns++
			if want.mss > 0 && p.MSS != want.mss {
				t.Errorf("SYN from %s carries MSS %d, want %d", p.Src, p.MSS, want.mss)
			}
		}
		if p.Payload == 0 {
			continue
		}
		data++
		if want.tos >= 0 && p.TOS != want.tos {
			t.Errorf("data packet from %s has TOS 0x%02x, want 0x%02x", p.Src, p.TOS, want.tos)
			return
		}
		if want.ttl > 0 && p.TTL != want.ttl {
			t.Errorf("data packet from %s has TTL %d, want %d", p.Src, p.TTL, want.ttl)
			return
		}
	}
	if want.mss > 0 && syns == 0 {
		t.Errorf("no SYN from %s captured", from)
	}
	if data == 0 {
		t.Errorf("no data packets from %s to port %d captured", from, to)
	}
}

// listenAt runs a server bound to addr ("127.0.0.1", "::1") with cfg and
// the iperf3 dialect on its main port; it returns the port.
func listenAt(t *testing.T, bind string, cfg session.ServerConfig) int {
	t.Helper()
	cfg.Bind, cfg.Port, cfg.IPv6 = bind, -1, strings.Contains(bind, ":")
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Listen(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("Listen: %v", err)
	}
	if _, err := enableIperf3(ctx, srv, Iperf3Config{}); err != nil {
		cancel()
		t.Fatalf("iperf3.Enable: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.Port()
}

// TestClientSocketOptionsOnTheWire checks -M, -S, -T and --cport from
// captured packets: our client against our server, every dialect that
// carries them, TCP and UDP, IPv4 and IPv6.
func TestClientSocketOptionsOnTheWire(t *testing.T) {
	so := sockopt.Options{MSS: 536, TOS: 0x10, SetTOS: true, TTL: 9}
	cases := []struct {
		name    string
		host    string
		dialect string
		udp     bool
	}{
		{"iperf2 tcp", "127.0.0.1", session.DialectIperf2, false},
		{"iperf2 udp", "127.0.0.1", session.DialectIperf2, true},
		{"iperf2-legacy tcp", "127.0.0.1", session.DialectIperf2Legacy, false},
		{"iperf3 tcp", "127.0.0.1", session.DialectIperf3, false},
		{"iperf3 udp", "127.0.0.1", session.DialectIperf3, true},
		{"iperf2 tcp ipv6", "::1", session.DialectIperf2, false},
		{"iperf2 udp ipv6", "::1", session.DialectIperf2, true},
		{"iperf3 tcp ipv6", "::1", session.DialectIperf3, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			port := listenAt(t, c.host, session.ServerConfig{})
			proto, want := 6, wireCheck{mss: so.MSS, tos: so.TOS, ttl: so.TTL}
			if c.udp {
				proto, want.mss = 17, 0
			}
			host := netip.MustParseAddr(c.host)
			checkOnWire(t, port, proto,
				func(cport int) netip.AddrPort { return netip.AddrPortFrom(host, uint16(cport)) },
				func(int) uint16 { return uint16(port) }, want,
				func(t *testing.T, cport int) {
					cfg := session.ClientConfig{Host: c.host, Port: port, Dialect: c.dialect, UDP: c.udp, Socket: so, CPort: cport,
						IPv6: c.host == "::1"}
					if c.udp {
						cfg.Duration = 300 * time.Millisecond
					} else {
						cfg.Bytes = 4 << 20
					}
					runShort(t, cfg)
				})
		})
	}
}

// TestServerSocketOptionsOnTheWire checks the server's own -M and -S (on
// its listener, inherited by each connection) and what our iperf3 server
// applies of a client's parameters (TOS on the data it sends with -R).
func TestServerSocketOptionsOnTheWire(t *testing.T) {
	lo := netip.MustParseAddr("127.0.0.1")
	fromServer := func(port int) func(int) netip.AddrPort {
		return func(int) netip.AddrPort { return netip.AddrPortFrom(lo, uint16(port)) }
	}
	toClient := func(cport int) uint16 { return uint16(cport) }
	t.Run("server -M -S, iperf2 -R", func(t *testing.T) {
		port := listenAt(t, "127.0.0.1", session.ServerConfig{Socket: sockopt.Options{MSS: 600, TOS: 0x28, SetTOS: true}})
		checkOnWire(t, port, 6, fromServer(port), toClient, wireCheck{mss: 600, tos: 0x28}, func(t *testing.T, cport int) {
			runShort(t, session.ClientConfig{Host: "127.0.0.1", Port: port, Reverse: true, Duration: 300 * time.Millisecond, CPort: cport})
		})
	})
	t.Run("iperf3 -R -S", func(t *testing.T) {
		port := listenAt(t, "127.0.0.1", session.ServerConfig{})
		checkOnWire(t, port, 6, fromServer(port), toClient, wireCheck{tos: 0x10}, func(t *testing.T, cport int) {
			runShort(t, session.ClientConfig{Host: "127.0.0.1", Port: port, Dialect: session.DialectIperf3, Reverse: true, CPort: cport,
				Duration: 500 * time.Millisecond, Socket: sockopt.Options{TOS: 0x10, SetTOS: true}})
		})
	})
}

// TestIperf3ParamsReachRealServer: real iperf3 3.12 applies the TOS we ask
// for to the TCP data it sends with -R, so the parameter's key and value are
// iperf3's own. (It leaves its UDP -R datagrams at TOS 0, as captured here
// once; our server does the same, so no UDP case.)
func TestIperf3ParamsReachRealServer(t *testing.T) {
	port, _ := realIperf3Server(t)
	lo := netip.MustParseAddr("127.0.0.1")
	checkOnWire(t, port, 6, func(int) netip.AddrPort { return netip.AddrPortFrom(lo, uint16(port)) },
		func(cport int) uint16 { return uint16(cport) }, wireCheck{tos: 0x10}, func(t *testing.T, cport int) {
			runShort(t, session.ClientConfig{Host: "127.0.0.1", Port: port, Dialect: session.DialectIperf3, Reverse: true,
				Duration: time.Second, CPort: cport, Socket: sockopt.Options{TOS: 0x10, SetTOS: true}})
		})
}

// skmem returns the kernel's receive and send buffer sizes (rb, tb of `ss
// -tm`) of the established TCP sockets matching the ss filter.
func skmem(t *testing.T, filter string) [][2]int {
	t.Helper()
	out, err := exec.Command("ss", append([]string{"-tmnH", "state", "established"}, strings.Fields(filter)...)...).CombinedOutput()
	if err != nil {
		t.Skipf("ss (iproute2) not usable: %v: %s", err, out)
	}
	var got [][2]int
	for _, line := range strings.Split(string(out), "\n") {
		i := strings.Index(line, "skmem:(")
		if i < 0 {
			continue
		}
		var rb, tb int
		for _, f := range strings.Split(strings.TrimSuffix(strings.SplitN(line[i+7:], ")", 2)[0], ")"), ",") {
			switch {
			case strings.HasPrefix(f, "rb"):
				rb, _ = strconv.Atoi(f[2:])
			case strings.HasPrefix(f, "tb"):
				tb, _ = strconv.Atoi(f[2:])
			}
		}
		got = append(got, [2]int{rb, tb})
	}
	return got
}

// TestWindowSetsBothSides: -w 64K gives both ends' sockets 64 KiB buffers
// (the kernel's own figures, read with ss, Linux reporting double), on our
// iperf2 server (its -w) and on our and real iperf3's servers (the client's
// window parameter), with the client's -w on its side.
func TestWindowSetsBothSides(t *testing.T) {
	const w = 64 << 10
	cases := []struct {
		name    string
		dialect string
		server  func(t *testing.T) int
	}{
		{"iperf2, server -w", session.DialectIperf2, func(t *testing.T) int {
			return listenAt(t, "127.0.0.1", session.ServerConfig{Socket: sockopt.Options{Buffer: w}})
		}},
		{"iperf3, our server", session.DialectIperf3, func(t *testing.T) int { return listenAt(t, "127.0.0.1", session.ServerConfig{}) }},
		{"iperf3, real server", session.DialectIperf3, func(t *testing.T) int { p, _ := realIperf3Server(t); return p }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			port := c.server(t)
			cport := loopback.FreePort(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			done := make(chan *result.Result, 1)
			go func() {
				r, err := runClient(ctx, session.ClientConfig{Host: "127.0.0.1", Port: port, Dialect: c.dialect, CPort: cport,
					Duration: 1500 * time.Millisecond, Socket: sockopt.Options{Buffer: w}})
				if err != nil {
					t.Error(err)
				}
				done <- r
			}()
			// Look while the test runs; on a busy machine the data stream
			// may be set up late, so look again until both ends are there.
			var clientSide, serverSide [][2]int
			for finished := false; !finished; {
				time.Sleep(100 * time.Millisecond)
				select {
				case <-done:
					finished = true
				default:
				}
				c, s := skmem(t, fmt.Sprintf("sport = :%d", cport)), skmem(t, fmt.Sprintf("dport = :%d", cport))
				if len(c) == 1 && len(s) == 1 {
					clientSide, serverSide = c, s
					if !finished {
						<-done
					}
					break
				}
				if len(c)+len(s) > len(clientSide)+len(serverSide) {
					clientSide, serverSide = c, s
				}
			}
			for name, got := range map[string][][2]int{"client": clientSide, "server": serverSide} {
				if len(got) != 1 {
					t.Errorf("%s: %d sockets of the data stream found, want 1", name, len(got))
					continue
				}
				if got[0] != [2]int{2 * w, 2 * w} {
					t.Errorf("%s: rb, tb = %v, want %d each (-w %d, doubled by Linux)", name, got[0], 2*w, w)
				}
			}
		})
	}
}

// TestClientPortsSeenByServer: --cport with -B's host decides the source
// ports the server sees, consecutive ones for -P, TCP and UDP.
func TestClientPortsSeenByServer(t *testing.T) {
	for _, udp := range []bool{false, true} {
		t.Run(fmt.Sprintf("udp=%v", udp), func(t *testing.T) {
			var mu sync.Mutex
			peers := map[string]bool{}
			ts := startServer(t, session.ServerConfig{OnTestStart: func(_ int, r *result.Result) {
				mu.Lock()
				peers[r.Test.Peer] = true
				mu.Unlock()
			}})
			_, port, _ := net.SplitHostPort(ts.addr)
			p, _ := strconv.Atoi(port)
			cport := freePortPair(t)
			cfg := session.ClientConfig{Host: "127.0.0.1", Port: p, Parallel: 2, CPort: cport, BindHost: "127.0.0.1", UDP: udp}
			if udp {
				cfg.Duration = 200 * time.Millisecond
			} else {
				cfg.Bytes = 1 << 20
			}
			runShort(t, cfg)
			ts.waitResults(1)
			mu.Lock()
			defer mu.Unlock()
			for _, want := range []int{cport, cport + 1} {
				if !peers[fmt.Sprintf("127.0.0.1:%d", want)] {
					t.Errorf("server saw peers %v, want 127.0.0.1:%d among them", peers, want)
				}
			}
		})
	}
}

// freePortPair finds a port p with p and p+1 free for TCP and UDP on
// 127.0.0.1.
func freePortPair(t *testing.T) int {
	t.Helper()
	for range 50 {
		p := loopback.FreePort(t)
		if p >= 65535 {
			continue
		}
		free := true
		for _, q := range []int{p, p + 1} {
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(q))
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				free = false
				break
			}
			ln.Close()
			uc, err := net.ListenPacket("udp", addr)
			if err != nil {
				free = false
				break
			}
			uc.Close()
		}
		if free {
			return p
		}
	}
	t.Fatal("no two consecutive free ports found")
	return 0
}
