package ping

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wirebench/wirebench/internal/result"
)

func TestPingSizeCounts(t *testing.T) {
	target := net.ParseIP("198.18.0.2")
	every := func(n int) func(int) bool { return func(seq int) bool { return seq%n == 0 } }
	tests := []struct {
		name   string
		host   fakeHost
		kind   result.PingSocketKind
		v6     bool
		size   int
		tmo    time.Duration // short where no reply is expected; long where replies must not race it
		want   result.PingSize
		events int
	}{
		{"all answered", fakeHost{rtt: time.Millisecond, maxSize: -1}, result.PingSocketRaw, false, 1000, 5 * time.Second,
			result.PingSize{Sent: 10, Received: 10}, 10},
		{"ipv6 unprivileged", fakeHost{rtt: time.Millisecond, maxSize: -1}, result.PingSocketUnprivileged, true, 65500, 5 * time.Second,
			result.PingSize{Sent: 10, Received: 10}, 10},
		{"too big for host", fakeHost{maxSize: 3000}, result.PingSocketRaw, false, 3001, 20 * time.Millisecond,
			result.PingSize{Sent: 10, LossPct: 100}, 0},
		{"corrupt half", fakeHost{rtt: time.Millisecond, maxSize: -1, corrupt: every(2)}, result.PingSocketRaw, false, 100, 500 * time.Millisecond,
			result.PingSize{Sent: 10, Received: 5, Corrupt: 5, LossPct: 50}, 10},
		{"duplicates", fakeHost{rtt: time.Millisecond, maxSize: -1, duplicate: every(5)}, result.PingSocketRaw, false, 64, 5 * time.Second,
			result.PingSize{Sent: 10, Received: 10, Duplicates: 3}, 13}, // seqs 0xffff, 0, 5
		{"late", fakeHost{rtt: time.Millisecond, maxSize: -1, late: every(2), lateBy: time.Hour}, result.PingSocketRaw, false, 64, 5 * time.Second,
			result.PingSize{Sent: 10, Received: 5, Late: 5, LossPct: 50}, 10},
		{"other pinger's replies", fakeHost{rtt: time.Millisecond, maxSize: -1, wrongID: true}, result.PingSocketRaw, false, 64, 20 * time.Millisecond,
			result.PingSize{Sent: 10, LossPct: 100}, 0},
		{"replies from elsewhere", fakeHost{rtt: time.Millisecond, maxSize: -1, from: net.ParseIP("198.18.0.9")}, result.PingSocketRaw, false, 64, 20 * time.Millisecond,
			result.PingSize{Sent: 10, LossPct: 100}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ip := target
			if tt.v6 {
				ip = net.ParseIP("fd00::2")
			}
			events := 0
			p, err := New(Config{Target: ip, Socket: tt.kind, Open: openFake(tt.host, nil, tt.kind),
				OnEvent: func(Event) { events++ }})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			// Start the sequence near the wrap to check 16-bit matching.
			p.seq = 0xfffc
			got, err := p.PingSize(context.Background(), tt.size, 10, 0, tt.tmo)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Samples) != got.Received {
				t.Errorf("%d samples for %d received", len(got.Samples), got.Received)
			}
			got.Samples, got.RTT, got.Size, tt.want.Samples = nil, result.PingRTT{}, 0, nil
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if events != tt.events {
				t.Errorf("%d events, want %d", events, tt.events)
			}
		})
	}
}

// TestSeqFromOne: a new pinger numbers its requests 1, 2, 3, ... as ping
// does.
func TestSeqFromOne(t *testing.T) {
	var seqs []int
	p, err := New(Config{Target: net.ParseIP("198.18.0.2"), Socket: result.PingSocketRaw,
		Open:    openFake(fakeHost{rtt: time.Millisecond, maxSize: -1}, nil, result.PingSocketRaw),
		OnEvent: func(ev Event) { seqs = append(seqs, ev.Seq) }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.PingSize(context.Background(), 64, 3, 0, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 2, 3}, seqs); diff != "" {
		t.Errorf("sequence numbers (-want +got):\n%s", diff)
	}
}

func TestPingSizeRTTFromTimestamps(t *testing.T) {
	p, err := New(Config{Target: net.ParseIP("127.0.0.1"), Socket: result.PingSocketRaw,
		Open: openFake(fakeHost{rtt: 3 * time.Millisecond, maxSize: -1}, nil, result.PingSocketRaw)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r, err := p.PingSize(context.Background(), 56, 5, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The fake stamps each reply exactly 3 ms after the send time it returned.
	if r.RTT.Min != 3*time.Millisecond || r.RTT.Max != 3*time.Millisecond || r.RTT.P50 != 3*time.Millisecond {
		t.Errorf("rtt %+v, want all 3ms", r.RTT)
	}
}

func TestPingSizeRTTFromKernelTx(t *testing.T) {
	open := func(kind result.PingSocketKind, v6 bool) (Conn, error) {
		return &stampedConn{fakeConn: newFakeConn(fakeHost{rtt: 3 * time.Millisecond, maxSize: -1}, kind, v6),
			txDelay: 40 * time.Microsecond, unstamped: func(seq int) bool { return seq%4 == 1 },
			seqs: make(map[time.Time]int)}, nil
	}
	p, err := New(Config{Target: net.ParseIP("127.0.0.1"), Socket: result.PingSocketRaw, Open: open})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.seq = 0
	var fromTx, fromCall int
	p.cfg.OnEvent = func(ev Event) {
		want := 3*time.Millisecond - 40*time.Microsecond
		if !ev.KernelTx {
			want = 3 * time.Millisecond
		}
		if ev.RTT != want {
			t.Errorf("seq %d: rtt %v (kernel tx %v), want %v", ev.Seq, ev.RTT, ev.KernelTx, want)
		}
		if ev.KernelTx {
			fromTx++
		} else {
			fromCall++
		}
	}
	r, err := p.PingSize(context.Background(), 56, 8, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Seqs 1 and 5 got no transmit timestamp: timed from the send call.
	if r.Received != 8 || r.KernelTx != 6 || fromTx != 6 || fromCall != 2 {
		t.Errorf("received %d, kernel tx %d; events %d from tx, %d from the call; want 8, 6; 6, 2",
			r.Received, r.KernelTx, fromTx, fromCall)
	}
	if r.RTT.Min != 3*time.Millisecond-40*time.Microsecond || r.RTT.Max != 3*time.Millisecond {
		t.Errorf("rtt %+v", r.RTT)
	}
}

func TestSocketDropsCounted(t *testing.T) {
	// The socket's counter reads 7 before the test, then 9 from seq 3 on.
	host := fakeHost{rtt: time.Millisecond, maxSize: -1, drops: func(seq int) uint32 {
		if seq >= 3 {
			return 9
		}
		return 7
	}}
	p, err := New(Config{Target: net.ParseIP("127.0.0.1"), Socket: result.PingSocketRaw, Open: openFake(host, nil, result.PingSocketRaw)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.seq, p.drops = 0, 7
	first, err := p.PingSize(context.Background(), 56, 3, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	second, err := p.PingSize(context.Background(), 56, 3, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if first.SocketDrops != 0 || second.SocketDrops != 2 {
		t.Errorf("socket drops %d then %d, want 0 then 2", first.SocketDrops, second.SocketDrops)
	}
}

func TestDFNeedsFragmentation(t *testing.T) {
	var seen []Event
	p, err := New(Config{Target: net.ParseIP("198.18.0.2"), Socket: result.PingSocketRaw,
		Open:    openFake(fakeHost{maxSize: -1, dfMTU: 1500}, nil, result.PingSocketRaw),
		PathMTU: func(net.IP) (int, error) { return 1500, nil },
		OnEvent: func(e Event) { seen = append(seen, e) }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.SetDF(true); err != nil {
		t.Fatal(err)
	}
	r, err := p.PingSize(context.Background(), 2000, 3, 0, time.Hour) // must not wait for the hour
	if err != nil {
		t.Fatal(err)
	}
	if r.TooBig != 3 || r.PathMTU != 1500 || r.Received != 0 || len(seen) != 3 {
		t.Fatalf("result %+v, events %v", r, seen)
	}
	for _, e := range seen {
		if e.Outcome != OutcomeTooBig || result.PingNeedsFragmentation(e.PathMTU) != "needs fragmentation (path MTU 1500)" {
			t.Errorf("event %+v", e)
		}
	}
	v := p.Try(context.Background(), 2000, time.Hour)
	if v.Answered || !v.Final || v.Reason != "needs fragmentation (path MTU 1500)" {
		t.Errorf("Try = %+v", v)
	}
}

func TestUnprivilegedUsesKernelID(t *testing.T) {
	p, err := New(Config{Target: net.ParseIP("127.0.0.1"), Socket: result.PingSocketAuto, ID: 7,
		Open: openFake(fakeHost{maxSize: -1}, os.NewSyscallError("socket", syscall.EPERM), result.PingSocketUnprivileged)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Info().Kind != result.PingSocketUnprivileged || p.ID() != 4242 {
		t.Errorf("kind %q id %d, want unprivileged 4242", p.Info().Kind, p.ID())
	}
}

func TestNoPermissionError(t *testing.T) {
	eperm := os.NewSyscallError("socket", syscall.EPERM)
	eacces := os.NewSyscallError("socket", syscall.EACCES)
	open := func(kind result.PingSocketKind, v6 bool) (Conn, error) {
		if kind == result.PingSocketRaw {
			return nil, eperm
		}
		return nil, eacces
	}
	_, err := Open(result.PingSocketAuto, false, open)
	if !errors.Is(err, ErrNoPermission) {
		t.Fatalf("Open error %v does not match ErrNoPermission", err)
	}
	var npe *NoPermissionError
	if !errors.As(err, &npe) {
		t.Fatalf("error %T is not a *NoPermissionError", err)
	}
	npe.GroupRange = "1 0"
	want := `no ICMP socket permitted: raw socket: socket: operation not permitted; ` +
		`unprivileged ICMP socket: socket: permission denied (net.ipv4.ping_group_range is "1 0"). ` +
		`To ping, do one of: run as root; grant CAP_NET_RAW (sudo setcap cap_net_raw+ep /path/to/wirebench); ` +
		`or allow unprivileged ICMP sockets: sudo sysctl -w net.ipv4.ping_group_range="0 2147483647"`
	if npe.Error() != want {
		t.Errorf("error text\n got %s\nwant %s", npe.Error(), want)
	}
	// One permission error and one other error is not "no permission".
	_, err = Open(result.PingSocketAuto, false, func(kind result.PingSocketKind, v6 bool) (Conn, error) {
		if kind == result.PingSocketRaw {
			return nil, eperm
		}
		return nil, os.NewSyscallError("socket", syscall.EAFNOSUPPORT)
	})
	if err == nil || errors.Is(err, ErrNoPermission) || !strings.Contains(err.Error(), "address family") {
		t.Errorf("mixed failure: %v", err)
	}
}

func TestRunReportsSocketAndFragments(t *testing.T) {
	cfg := Config{Target: net.ParseIP("198.18.0.2"), Open: openFake(fakeHost{maxSize: -1}, nil, result.PingSocketRaw)}
	res, err := Run(context.Background(), "lab", cfg, Options{Sizes: []int{1472, 1473, 65507}, Count: 2,
		Timeout: time.Second, MTU: 1500})
	if err != nil {
		t.Fatal(err)
	}
	if res.Socket.Kind != result.PingSocketRaw || len(res.Sizes) != 3 {
		t.Fatalf("result %+v", res)
	}
	for i, want := range []int{1, 2, 45} {
		if s := res.Sizes[i]; s.Fragments != want || s.Received != 2 {
			t.Errorf("size %d: %d fragments, %d received; want %d, 2", s.Size, s.Fragments, s.Received, want)
		}
	}
}

func TestReassemblyFake(t *testing.T) {
	cfg := Config{Target: net.ParseIP("198.18.0.2"),
		Open:    openFake(fakeHost{maxSize: 3000, dfMTU: 1500}, nil, result.PingSocketRaw),
		PathMTU: func(net.IP) (int, error) { return 1500, nil }}
	res, err := Reassembly(context.Background(), "lab", cfg, 0, 2, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.WithoutDF.Largest != 3000 || res.WithoutDF.FirstFailing != 3001 {
		t.Errorf("without DF: %+v", res.WithoutDF)
	}
	if res.WithDF == nil || res.WithDF.Largest != 1472 || res.WithDF.FirstFailing != 1473 ||
		res.WithDF.FailReason != "needs fragmentation (path MTU 1500)" {
		t.Errorf("with DF: %+v", res.WithDF)
	}
}

func TestPingSizeCancel(t *testing.T) {
	p, err := New(Config{Target: net.ParseIP("198.18.0.2"), Socket: result.PingSocketRaw,
		Open: openFake(fakeHost{maxSize: 0}, nil, result.PingSocketRaw)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := p.PingSize(ctx, 100, 1000, time.Hour, time.Hour)
	if !errors.Is(err, context.Canceled) || r.Sent != 1 {
		t.Errorf("sent %d, err %v; want 1 sent and context.Canceled", r.Sent, err)
	}
}

// TestForeignFloodDoesNotStall: a raw socket also reads every other
// pinger's replies. With 20000 of them queued, our probes still go out on
// time and are all counted.
func TestForeignFloodDoesNotStall(t *testing.T) {
	fc := newFakeConn(fakeHost{rtt: time.Millisecond, maxSize: -1}, result.PingSocketRaw, false)
	target := net.ParseIP("127.0.0.1")
	foreign := echoReply(false, 0x7777, 1, Payload(1, 56))
	for range 20000 {
		fc.q <- Packet{Data: foreign, From: target, At: time.Now(), Kernel: true}
	}
	p, err := New(Config{Target: target, Socket: result.PingSocketRaw, ID: 0x1111,
		Open: func(result.PingSocketKind, bool) (Conn, error) { return fc, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r, err := p.PingSize(context.Background(), 56, 3, 10*time.Millisecond, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sent != 3 || r.Received != 3 {
		t.Errorf("sent %d, received %d; want 3, 3", r.Sent, r.Received)
	}
}
