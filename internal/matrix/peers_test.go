package matrix_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
	"github.com/wirebench/wirebench/internal/units"
)

// Issue 12: "against real `iperf -s` and `iperf -s -u` and against
// `iperf3 -s`, each cell's numbers match the peer's own output". The peers
// run on loopback; their output is parsed here and put beside each cell.

// peer is a real iperf or iperf3 server on a free loopback port.
type peer struct {
	port int
	pid  int
	out  *loopback.Buffer
}

// startPeer runs bin with args plus -p PORT, killed when the test ends, and
// waits until it prints ready.
func startPeer(t *testing.T, bin, ready string, args ...string) *peer {
	t.Helper()
	path, err := exec.LookPath(bin)
	if err != nil {
		t.Skipf("%s is not installed: this interop test needs it (CI installs it with apt-get)", bin)
	}
	p := &peer{port: loopback.FreePort(t), out: &loopback.Buffer{}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, path, append(args, "-p", strconv.Itoa(p.port))...)
	cmd.Stdout, cmd.Stderr, cmd.WaitDelay = p.out, p.out, time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", bin, err)
	}
	p.pid = cmd.Process.Pid
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			t.Logf("%s output:\n%s", bin, p.out.String())
		}
	})
	for end := time.Now().Add(30 * time.Second); !strings.Contains(p.out.String(), ready); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s did not start:\n%s", bin, p.out.String())
		}
	}
	return p
}

// runMatrix runs a one-protocol matrix against the peer, 2 s per cell.
func runMatrix(t *testing.T, p *peer, dialect, proto string) *result.Matrix {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := matrix.Config{Protocols: []string{proto}, Pause: matrix.DefaultPause, Base: session.ClientConfig{Host: "127.0.0.1", Port: p.port,
		Dialect: dialect, Duration: 2 * time.Second, Rate: units.Rate{Value: 20e6}}}
	m, err := matrix.Run(ctx, matrix.ClientSessions{}, cfg)
	if err != nil {
		t.Fatalf("matrix: %v", err)
	}
	for _, c := range m.Cells {
		t.Logf("%s: %s %s bps=%s loss=%s jitter=%s basis %s", c.Name(), c.Status, c.Reason, fmtOpt(c.BitsPerSecond),
			fmtOpt(c.LossPercent), fmtOpt(c.JitterMS), c.Basis)
		if c.Status != matrix.StatusOK || c.BitsPerSecond == nil || c.Result == nil {
			t.Fatalf("%s: %s %s", c.Name(), c.Status, c.Reason)
		}
	}
	return m
}

// iperf2Line is a figures line of iperf 2 printed with -f B:
//
//	[  1] 0.0000-2.0027 sec  5031 Bytes  2512 Bytes/sec  0.006 ms 0/8505 (0%)
var iperf2Line = regexp.MustCompile(`(?m)^\[\s*(\d+)\] (\d+\.\d+)-(\d+\.\d+) sec\s+(\d+) Bytes\s+(\d+) Bytes/sec(?:\s+(\S+) ms\s+(-?\d+)/\s*(\d+))?`)

// iperf2Figures is one test as iperf 2 printed it.
type iperf2Figures struct {
	reverse          bool // the line is a (reverse) test's: the server sent
	seconds          float64
	bytes            int64
	jitterMS         float64
	lost, total      int64
	hasUDPReceiverCs bool
}

// parseIperf2 returns the final line of each test the server printed, in
// order. A test's id line says "(reverse)" when the server sent.
func parseIperf2(t *testing.T, out string) []iperf2Figures {
	t.Helper()
	reverse := map[string]bool{}
	for _, m := range regexp.MustCompile(`\[\s*(\d+)\] local .*connected with.*`).FindAllStringSubmatch(out, -1) {
		reverse[m[1]] = strings.Contains(m[0], "(reverse)")
	}
	var figs []iperf2Figures
	for _, m := range iperf2Line.FindAllStringSubmatch(out, -1) {
		start, _ := strconv.ParseFloat(m[2], 64)
		end, _ := strconv.ParseFloat(m[3], 64)
		f := iperf2Figures{reverse: reverse[m[1]], seconds: end - start}
		f.bytes, _ = strconv.ParseInt(m[4], 10, 64)
		if m[6] != "" {
			f.hasUDPReceiverCs = true
			f.jitterMS, _ = strconv.ParseFloat(m[6], 64)
			f.lost, _ = strconv.ParseInt(m[7], 10, 64)
			f.total, _ = strconv.ParseInt(m[8], 10, 64)
		}
		figs = append(figs, f)
	}
	return figs
}

// near fails unless got is within tol (a fraction) of want.
func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Abs(want) {
		t.Errorf("%s: ours %.6g, the peer's %.6g (more than %.2g %% apart)", what, got, want, 100*tol)
	}
}

// received checks a TCP download: we received at most what the peer says
// it wrote, and at most 0.5 % less — the bytes still in flight in the
// socket buffers when the test ended (a few MB at loopback's 10+ Gbit/s).
func received(t *testing.T, what string, ours, sent int64) {
	t.Helper()
	if ours > sent || float64(sent-ours) > 0.005*float64(sent) {
		t.Errorf("%s: we received %d bytes, the peer wrote %d", what, ours, sent)
	}
}

// waitOutput waits until out holds n matches of re (a peer prints a test's
// figures a moment after our side ended it).
func waitOutput(t *testing.T, p *peer, re *regexp.Regexp, n int) string {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out := p.out.String()
		if len(re.FindAllString(out, -1)) >= n || time.Now().After(end) {
			return out
		}
	}
}

func TestMatrixAgainstIperf2TCP(t *testing.T) {
	p := startPeer(t, "iperf", "Server listening", "-s", "-B", "127.0.0.1", "-f", "B")
	m := runMatrix(t, p, session.DialectIperf2, result.TCP)
	figs := parseIperf2(t, waitOutput(t, p, iperf2Line, 2))
	if len(figs) != 2 || !figs[0].reverse || figs[1].reverse {
		t.Fatalf("iperf printed %+v: want a reverse test, then an upload", figs)
	}
	figs[0], figs[1] = figs[1], figs[0]
	up, down := m.Cells[0], m.Cells[1]
	// iperf 2 does not report a TCP test back: the upload cell is what we
	// sent and the peer acknowledged, which iperf counts as received.
	if up.Basis != "sender" {
		t.Errorf("upload basis %q, want sender (iperf 2 reports nothing back for TCP)", up.Basis)
	}
	// The bytes agree; the rate is over the sender's window (first write
	// to last acknowledgement) where iperf's is over its own (accept to
	// last read): at loopback's 10+ Gbit/s a few ms apart move it by 1-3 %.
	near(t, "upload bytes", float64(up.Result.Sender.Bytes), float64(figs[0].bytes), 0.001)
	if d := up.Result.Sender.Seconds - figs[0].seconds; math.Abs(d) > 0.05 {
		t.Errorf("upload: our window %.4f s, iperf's %.4f s", up.Result.Sender.Seconds, figs[0].seconds)
	}
	near(t, "upload bit/s", *up.BitsPerSecond, float64(figs[0].bytes)*8/figs[0].seconds, 0.03)
	received(t, "download", down.Result.Receiver.Bytes, figs[1].bytes)
	// Our receiver's window (first to last byte read) and iperf's sender
	// window (first to last write) differ by scheduling as the upload's do.
	if d := down.Result.Receiver.Seconds - figs[1].seconds; math.Abs(d) > 0.05 {
		t.Errorf("download: our window %.4f s, iperf's %.4f s", down.Result.Receiver.Seconds, figs[1].seconds)
	}
	near(t, "download bit/s", *down.BitsPerSecond, float64(figs[1].bytes)*8/figs[1].seconds, 0.03)
}

func TestMatrixAgainstIperf2UDP(t *testing.T) {
	p := startPeer(t, "iperf", "Server listening", "-s", "-u", "-B", "127.0.0.1", "-f", "B", "-w", "2M")
	m := runMatrix(t, p, session.DialectIperf2, result.UDP)
	figs := parseIperf2(t, waitOutput(t, p, iperf2Line, 2))
	if len(figs) != 2 || !figs[0].reverse || figs[1].reverse || !figs[1].hasUDPReceiverCs {
		t.Fatalf("iperf printed %+v: want a reverse test, then an upload with receiver counts", figs)
	}
	figs[0], figs[1] = figs[1], figs[0]
	up, down := m.Cells[0], m.Cells[1]
	// The upload cell is iperf's own server report: the same counts.
	f := figs[0]
	if up.Basis != "receiver" || up.Result.Receiver.Bytes != f.bytes || up.Result.Receiver.Lost != f.lost {
		t.Errorf("upload: ours %d bytes, %d lost (basis %s); iperf %d bytes, %d/%d lost", up.Result.Receiver.Bytes,
			up.Result.Receiver.Lost, up.Basis, f.bytes, f.lost, f.total)
	}
	near(t, "upload loss %", *up.LossPercent, 100*float64(f.lost)/float64(f.total), 0.001)
	// iperf prints jitter rounded to 1 µs and sends its report back a
	// moment after it printed: one more datagram's worth of smoothing.
	if math.Abs(*up.JitterMS-f.jitterMS) > 0.0015 {
		t.Errorf("upload jitter %.4f ms, iperf printed %.3f", *up.JitterMS, f.jitterMS)
	}
	near(t, "upload bit/s", *up.BitsPerSecond, float64(f.bytes)*8/f.seconds, 0.01)
	// Download: iperf sent, we counted what arrived; on loopback that is
	// what it sent, give or take a datagram the late FIN raced.
	near(t, "download bytes", float64(down.Result.Receiver.Bytes), float64(figs[1].bytes), 0.002)
	near(t, "download bit/s", *down.BitsPerSecond, float64(figs[1].bytes)*8/figs[1].seconds, 0.01)
}

// iperf3End is what iperf3 -J prints at the end of each test (the keys
// compared here).
type iperf3End struct {
	Start struct {
		TestStart struct {
			Reverse  int    `json:"reverse"`
			Protocol string `json:"protocol"`
		} `json:"test_start"`
	} `json:"start"`
	End struct {
		SumSent     iperf3Sum `json:"sum_sent"`
		SumReceived iperf3Sum `json:"sum_received"`
		Sum         iperf3Sum `json:"sum"`
	} `json:"end"`
}

type iperf3Sum struct {
	Bytes       int64   `json:"bytes"`
	BPS         float64 `json:"bits_per_second"`
	JitterMS    float64 `json:"jitter_ms"`
	LostPackets int64   `json:"lost_packets"`
	Packets     int64   `json:"packets"`
	LostPercent float64 `json:"lost_percent"`
}

// parseIperf3 decodes the JSON documents iperf3 -s -J printed, one per test.
func parseIperf3(t *testing.T, p *peer, n int) []iperf3End {
	t.Helper()
	var docs []iperf3End
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		docs = docs[:0]
		dec := json.NewDecoder(strings.NewReader(p.out.String()))
		for {
			var d iperf3End
			if dec.Decode(&d) != nil {
				break
			}
			docs = append(docs, d)
		}
		if len(docs) >= n || time.Now().After(end) {
			return docs
		}
	}
}

func TestMatrixAgainstIperf3(t *testing.T) {
	p := startPeer(t, "iperf3", "", "-s", "-B", "127.0.0.1", "-J")
	waitListening(t, p)
	tcp := runMatrix(t, p, session.DialectIperf3, result.TCP)
	// iperf3 closes and reopens its listening socket after each test; a
	// second matrix started at once can find it closed (the first waits
	// between its own cells).
	waitListening(t, p)
	udp := runMatrix(t, p, session.DialectIperf3, result.UDP)
	docs := parseIperf3(t, p, 4)
	if len(docs) != 4 {
		t.Fatalf("iperf3 printed %d test documents, want 4", len(docs))
	}
	// Each protocol's download ran before its upload.
	cells := []result.MatrixCell{tcp.Cells[1], tcp.Cells[0], udp.Cells[1], udp.Cells[0]}
	for i, c := range cells {
		d := docs[i]
		reverse := c.Direction == result.MatrixDownload
		if (d.Start.TestStart.Reverse == 1) != reverse || !strings.EqualFold(d.Start.TestStart.Protocol, c.Protocol) {
			t.Fatalf("iperf3 test %d is %s reverse=%d, cell %s", i, d.Start.TestStart.Protocol, d.Start.TestStart.Reverse, c.Name())
		}
		switch {
		case c.Protocol == result.TCP && !reverse:
			// iperf3 received: its sum_received is the figure of the cell.
			near(t, c.Name()+" bytes", float64(c.Result.Receiver.Bytes), float64(d.End.SumReceived.Bytes), 0)
			near(t, c.Name()+" bit/s", *c.BitsPerSecond, d.End.SumReceived.BPS, 0.01)
		case c.Protocol == result.TCP:
			received(t, c.Name(), c.Result.Receiver.Bytes, d.End.SumSent.Bytes)
			near(t, c.Name()+" bit/s", *c.BitsPerSecond, d.End.SumSent.BPS, 0.02)
		case !reverse:
			// The server's receiver counts came back in its results.
			s := d.End.SumReceived
			if c.Result.Receiver.Lost != s.LostPackets || math.Abs(*c.JitterMS-s.JitterMS) > 1e-6 {
				t.Errorf("%s: ours lost %d jitter %.6f ms; iperf3 lost %d jitter %.6f", c.Name(), c.Result.Receiver.Lost,
					*c.JitterMS, s.LostPackets, s.JitterMS)
			}
			near(t, c.Name()+" loss %", *c.LossPercent, s.LostPercent, 0.01)
			near(t, c.Name()+" bit/s", *c.BitsPerSecond, s.BPS, 0.01)
		default:
			near(t, c.Name()+" bytes", float64(c.Result.Receiver.Bytes), float64(d.End.Sum.Bytes), 0.002)
			near(t, c.Name()+" bit/s", *c.BitsPerSecond, d.End.Sum.BPS, 0.02)
		}
	}
}

// waitListening waits until a TCP socket listens on port (iperf3 -J prints
// nothing before its first test).
func waitListening(t *testing.T, p *peer) {
	t.Helper()
	port := p.port
	want := fmt.Sprintf(":%04X 00000000:0000 0A", port)
	// Generous: a peer started on a loaded machine once took over 5 s to
	// listen; the wait ends as soon as it does.
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		// The peer's own view of its network namespace: /proc/net is the
		// view of this process's main thread, which a lab test in this
		// process may have left elsewhere.
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", p.pid))
		if err != nil {
			time.Sleep(500 * time.Millisecond) // no /proc: give it the time it takes
			return
		}
		if strings.Contains(string(b), want) {
			return
		}
	}
	t.Fatalf("nothing listens on port %d after 30 s", port)
}

func fmtOpt(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f %%", *v)
}
