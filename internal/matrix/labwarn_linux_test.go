//go:build linux

package matrix_test

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/calc"
	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/labhost"
)

// Issue 35's `matrix --dialect iperf2-legacy --medium eth100` over the
// lab's 100 Mbit/s link: the TCP download cell (-r: the server connects
// back after our forward test) is the connect-back's receiver count, and
// carries no warning of the forward test it does not show — in particular
// not "the receiver's goodput is unknown", which was said of the forward
// test (the legacy dialect asks the peer for no report of a TCP test it
// received). The peer is a real iperf 2 server in B.
func TestLabLegacyDownloadWarnsOfItsOwnFigures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lab := labhost.New(t, ctx, netlab.Config{Name: "mxwarn", RateBPS: 100e6, ShapeBothWays: true, Router: true}, "two 2 s cells")
	// A real iperf 2 server in B, in a process of its own: our in-process
	// server's connect-back would dial from whatever thread runs it, not
	// from B's namespace.
	const port = 15935
	if _, err := exec.LookPath("iperf"); err != nil {
		t.Skip("iperf (2) is not installed: apt-get install -y iperf")
	}
	srv := lab.B.Command(ctx, "iperf", "-s", "-p", strconv.Itoa(port))
	if err := srv.Start(); err != nil {
		t.Fatalf("iperf -s in %s: %v", lab.B.Name, err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	dst := net.JoinHostPort(lab.B.Addr.String(), strconv.Itoa(port))
	if err := lab.A.Do(func() error {
		var err error
		for range 50 { // until it listens: at most 5 s
			var c net.Conn
			if c, err = net.DialTimeout("tcp", dst, time.Second); err == nil {
				return c.Close()
			}
			time.Sleep(100 * time.Millisecond)
		}
		return err
	}); err != nil {
		t.Fatalf("iperf -s in %s never listened: %v", lab.B.Name, err)
	}
	link, err := calc.LinkOptions{Medium: "eth100"}.Placer()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := matrix.Options{Port: port, Seconds: 2, Proto: result.TCP, Dialect: session.DialectIperf2Legacy,
		DialectGiven: true}.Config(lab.B.Addr.String(), link)
	if err != nil {
		t.Fatal(err)
	}
	var m *result.Matrix
	if err := lab.A.Do(func() (err error) {
		m, err = matrix.Run(ctx, matrix.ClientSessions{}, cfg)
		return err
	}); err != nil {
		t.Fatalf("running the matrix in %s: %v", lab.A.Name, err)
	}
	t.Logf("warnings: %q", m.Warnings)
	var down *result.MatrixCell
	for i := range m.Cells {
		if m.Cells[i].Direction == result.MatrixDownload {
			down = &m.Cells[i]
		}
	}
	if down == nil || down.Status != matrix.StatusOK || down.Basis != "receiver" || down.Method != "-r" {
		t.Fatalf("download cell %+v: want -r, ok, on the connect-back's receiver count", down)
	}
	var own []string
	for _, w := range m.Warnings {
		if s, ok := strings.CutPrefix(w, down.Name()+": "); ok {
			own = append(own, s)
		}
	}
	for _, w := range own {
		if strings.Contains(w, "goodput is unknown") {
			t.Errorf("%s (basis %s) warns %q", down.Name(), down.Basis, w)
		}
	}
	if fwd := down.Result.Warnings; len(own) == 0 || !strings.Contains(strings.Join(own, "\n"), "TCP is placed assuming full-size segments") {
		t.Errorf("%s warnings %q: want its own placement's (the test's: %q)", down.Name(), own, fwd)
	}
}
