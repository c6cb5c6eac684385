//go:build linux

package ping

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
)

// newLab makes a two-namespace lab (198.18.0.1 ↔ 198.18.0.2, MTU 1500)
// and a Config whose sockets and route lookups live in host A.
func newLab(t *testing.T, cfg netlab.Config) (*netlab.Lab, Config) {
	t.Helper()
	needRoot(t)
	if err := netlab.Available(); err != nil {
		t.Skipf("no lab: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lab, err := netlab.New(ctx, cfg)
	if err != nil {
		t.Fatalf("creating lab: %v", err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Errorf("closing lab: %v", err)
		}
	})
	pc := Config{
		Target: net.IP(lab.B.Addr.AsSlice()),
		Open: func(kind result.PingSocketKind, v6 bool) (c Conn, err error) {
			derr := lab.A.Do(func() error { c, err = OpenSystem(kind, v6); return nil })
			return c, errors.Join(derr, err)
		},
		PathMTU: func(ip net.IP) (mtu int, err error) {
			derr := lab.A.Do(func() error { mtu, err = RouteMTU(ip); return nil })
			return mtu, errors.Join(derr, err)
		},
	}
	return lab, pc
}

func sysctl(t *testing.T, h *netlab.Host, setting string) {
	t.Helper()
	if out, err := h.Command(context.Background(), "sysctl", "-w", setting).CombinedOutput(); err != nil {
		t.Fatalf("sysctl -w %s in %s: %v\n%s", setting, h.Name, err, out)
	}
}

// sizeLimitedResponder answers, from host h, echo requests whose payload is
// at most limit bytes, like a device that reassembles up to limit (the
// AR1688 of seed 004). The kernel's own echo replies are switched off.
func sizeLimitedResponder(t *testing.T, h *netlab.Host, limit int) {
	t.Helper()
	sysctl(t, h, "net.ipv4.icmp_echo_ignore_all=1")
	var c Conn
	if err := h.Do(func() (err error) { c, err = openSystem(result.PingSocketRaw, false, false, ""); return err }); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { c.Close(); <-done })
	go func() {
		defer close(done)
		buf := make([]byte, 70000)
		for {
			p, err := c.ReadPacket(buf)
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil || len(p.Data) < 8 || p.Data[0] != byte(ipv4.ICMPTypeEcho) {
				continue
			}
			m, err := icmp.ParseMessage(protoICMP, p.Data)
			if err != nil {
				continue
			}
			e, ok := m.Body.(*icmp.Echo)
			if !ok || len(e.Data) > limit {
				continue
			}
			b, err := (&icmp.Message{Type: ipv4.ICMPTypeEchoReply, Body: e}).Marshal(nil)
			if err == nil {
				c.WriteTo(b, p.From)
			}
		}
	}()
}

func TestLabReassemblyProbe(t *testing.T) {
	tests := []struct {
		name    string
		limit   int // 0: the kernel answers
		largest int
	}{
		{"normal host", 0, MaxPayload4},
		{"host reassembling up to 3000", 3000, 3000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab, cfg := newLab(t, netlab.Config{Name: "ping"})
			if tt.limit > 0 {
				sizeLimitedResponder(t, lab.B, tt.limit)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := Reassembly(ctx, "lab", cfg, 0, 3, 300*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			w := res.WithoutDF
			if res.PathMTU != 1500 || w.Largest != tt.largest || res.Error != "" {
				t.Fatalf("path MTU %d, without DF %+v, error %q", res.PathMTU, w, res.Error)
			}
			if tt.limit > 0 && (w.FirstFailing != tt.limit+1 || w.FailReason != "no reply within 300ms") {
				t.Errorf("first failing %d (%s), want %d (no reply)", w.FirstFailing, w.FailReason, tt.limit+1)
			}
			d := res.WithDF
			if d == nil || d.Largest != 1472 || d.FirstFailing != 1473 || d.FailReason != "needs fragmentation (path MTU 1500)" {
				t.Errorf("with DF: %+v (%s)", d, res.DFError)
			}
			t.Logf("without DF: largest %d, first failing %d, %d sizes tried; with DF: largest %d, first failing %d (%s)",
				w.Largest, w.FirstFailing, len(w.Steps), d.Largest, d.FirstFailing, d.FailReason)
		})
	}
}

func TestLabDFNeedsFragmentation(t *testing.T) {
	_, cfg := newLab(t, netlab.Config{Name: "pingdf"})
	var events []Event
	cfg.OnEvent = func(e Event) { events = append(events, e) }
	res, err := Run(context.Background(), "lab", cfg, Options{Sizes: []int{2000, 1472}, Count: 3, DF: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	big, small := res.Sizes[0], res.Sizes[1]
	if big.Sent != 3 || big.TooBig != 3 || big.PathMTU != 1500 || big.Received != 0 {
		t.Errorf("2000 bytes with DF: %+v", big)
	}
	// The failed sends restarted the kernel's timestamp counter: the
	// sends after them must still find their own transmit timestamps.
	if small.Received != 3 || small.KernelTx != 3 {
		t.Errorf("1472 bytes with DF: %+v", small)
	}
	n := 0
	for _, e := range events {
		if e.Size == 2000 && e.Outcome == OutcomeTooBig && result.PingNeedsFragmentation(e.PathMTU) == "needs fragmentation (path MTU 1500)" {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d needs-fragmentation events for 2000 bytes, want 3: %+v", n, events)
	}
}

func TestLabUnprivileged65500(t *testing.T) {
	lab, cfg := newLab(t, netlab.Config{Name: "pingdg"})
	sysctl(t, lab.A, `net.ipv4.ping_group_range=0 2147483647`)
	cfg.Socket = result.PingSocketUnprivileged
	res, err := Run(context.Background(), "lab", cfg, Options{Sizes: []int{65500}, Count: 20, Interval: 50 * time.Millisecond, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Sizes[0]
	if res.Socket.Kind != result.PingSocketUnprivileged || s.Received != 20 || s.Corrupt != 0 || s.Fragments != 45 {
		t.Fatalf("socket %+v, result %+v", res.Socket, s)
	}
	t.Logf("lab, unprivileged socket (id %d), 65500 bytes in %d fragments: rtt min/p50/avg/max %v/%v/%v/%v",
		res.ID, s.Fragments, s.RTT.Min, s.RTT.P50, s.RTT.Avg, s.RTT.Max)
	compareWithIputils(t, cfg, lab.A.Command, "lab namespace, unprivileged socket")
}

// TestLabSameRunAsIputils: to a lab namespace over a raw socket, our
// median RTT for 65500-byte echoes is no higher than iputils ping's.
func TestLabSameRunAsIputils(t *testing.T) {
	lab, cfg := newLab(t, netlab.Config{Name: "pingcmp"})
	cfg.Socket = result.PingSocketRaw
	compareWithIputils(t, cfg, lab.A.Command, "lab namespace, raw socket")
}

// TestLabImpliedRate10M pings 65500 bytes over a link shaped as 10 Mbit/s
// Ethernet both ways and holds the implied rate to within 5 % of the
// model's (the must-show). tbf's bucket is one full frame: a
// larger one lets its first frames through at veth speed, which read as
// 4–5 % faster than the wire. The emulated wire is only as punctual as
// this VM's timers, so up to three tries are made, each logged.
func TestLabImpliedRate10M(t *testing.T) {
	_, cfg := newLab(t, netlab.Config{Name: "ping10m", RateBPS: 10_000_000, ShapeBothWays: true,
		Latency: 500 * time.Millisecond, Burst: 1500 + netlab.EthernetHeader + netlab.EthernetOverhead})
	m, err := linerate.LookupMedium("eth10")
	if err != nil {
		t.Fatal(err)
	}
	e, err := linerate.AnalyzeEcho(m, linerate.Stack{MTU: 1500}, 65500)
	if err != nil {
		t.Fatal(err)
	}
	var share float64
	for try := 1; try <= 3; try++ {
		res, err := Run(context.Background(), "lab", cfg, Options{Sizes: []int{65500}, Count: 5, Interval: 300 * time.Millisecond, Timeout: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Sizes[0]
		if s.Received != 5 {
			t.Fatalf("result %+v", s)
		}
		implied := linerate.ImpliedBPS(e.Request.WireBytes, s.RTT.P50.Seconds())
		share = implied / m.BitRate
		t.Logf("try %d: 10 Mbit/s lab, 65500 bytes: median RTT %v (model's wire-only round trip %.3f ms); implied %.3f Mbit/s, %.2f %% of the model's 10 Mbit/s",
			try, s.RTT.P50, e.RoundTripWire*1e3, implied/1e6, 100*share)
		if share >= 0.95 && share <= 1.05 {
			return
		}
	}
	t.Errorf("implied rate %.2f %% of the model's, want within 5 %%", 100*share)
}

// TestLabNoSuchHost pings an address on the lab link that nobody holds:
// the neighbour lookup fails, the kernel reports the host unreachable, and
// every probe is counted unreachable, raw and unprivileged, and the run ends.
func TestLabNoSuchHost(t *testing.T) {
	for _, kind := range []result.PingSocketKind{result.PingSocketRaw, result.PingSocketUnprivileged} {
		t.Run(string(kind), func(t *testing.T) {
			lab, cfg := newLab(t, netlab.Config{Name: "pingnx"})
			if kind == result.PingSocketUnprivileged {
				sysctl(t, lab.A, `net.ipv4.ping_group_range=0 2147483647`)
			}
			cfg.Socket = kind
			cfg.Target = net.IPv4(198, 18, 0, 77) // on the lab's link, held by nobody
			start := time.Now()
			res, err := Run(context.Background(), "lab", cfg, Options{Sizes: []int{56, 3000}, Count: 2, Interval: 100 * time.Millisecond, Timeout: 4 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			for _, s := range res.Sizes {
				// The unprivileged socket is told through its error
				// queue, the raw one by the ICMP message itself.
				if s.Sent != 2 || s.Received != 0 || s.LossPct != 100 || s.Unreachable != 2 {
					t.Errorf("size %d: %+v", s.Size, s)
				}
				t.Logf("size %d: sent %d, unreachable %d, send errors %d (%s)", s.Size, s.Sent, s.Unreachable, s.SendErrors, s.Error)
			}
			if res.Error != "" {
				t.Errorf("run error %q", res.Error)
			}
			// Never a hang: each size waits at most its last probe's
			// timeout (a loose bound, not a timing measurement).
			if took > 30*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// TestLabSource binds the socket (-I) to A's address and to A's interface:
// replies come back; bound to the loopback interface the requests leave
// through lo, where B is not, and every probe is lost.
func TestLabSource(t *testing.T) {
	tests := []struct {
		name   string
		source func(lab *netlab.Lab) string
		ok     bool
	}{
		{"address", func(lab *netlab.Lab) string { return lab.A.Addr.String() }, true},
		{"interface", func(lab *netlab.Lab) string { return lab.A.Ifname }, true},
		{"wrong interface", func(*netlab.Lab) string { return "lo" }, false},
	}
	for _, tt := range tests {
		for _, kind := range []result.PingSocketKind{result.PingSocketRaw, result.PingSocketUnprivileged} {
			t.Run(tt.name+"/"+string(kind), func(t *testing.T) {
				lab, cfg := newLab(t, netlab.Config{Name: "pingsrc"})
				sysctl(t, lab.A, `net.ipv4.ping_group_range=0 2147483647`)
				src := tt.source(lab)
				cfg.Socket = kind
				cfg.Open = func(kind result.PingSocketKind, v6 bool) (c Conn, err error) {
					derr := lab.A.Do(func() error { c, err = OpenSystemFrom(kind, v6, src); return nil })
					return c, errors.Join(derr, err)
				}
				res, err := Run(context.Background(), "lab", cfg, Options{Sizes: []int{56, 3000}, Count: 2, Interval: 50 * time.Millisecond, Timeout: 2 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				if res.Socket.Source != src {
					t.Errorf("socket source %q, want %q", res.Socket.Source, src)
				}
				for _, s := range res.Sizes {
					if tt.ok && (s.Received != 2 || s.SendErrors != 0) || !tt.ok && (s.Received != 0 || s.LossPct != 100) {
						t.Errorf("bound to %s, size %d: %+v", src, s.Size, s)
					}
				}
			})
		}
	}
}
