package iperf2

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
)

// TestServerNamesTCPDialects: the server names a TCP test by what its
// client sent: our iperf2-legacy client's upload (a 24-byte header with
// flags 0, as iperf 2.0.5's without -r/-d) is iperf2-legacy, not raw; a
// raw client's (no header) is raw; a 2.1 header is iperf2. Every byte is
// counted as data in the first two, as a 2.1 server counts them.
func TestServerNamesTCPDialects(t *testing.T) {
	ts := startServer(t, session.ServerConfig{IdleTimeout: 2 * time.Second, HeaderTimeout: time.Second})
	host, port, _ := net.SplitHostPort(ts.addr)
	p, _ := strconv.Atoi(port)
	for i, dialect := range []string{session.DialectIperf2Legacy, session.DialectRaw, session.DialectIperf2} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		r, err := runClient(ctx, session.ClientConfig{Host: host, Port: p, Dialect: dialect, Duration: 300 * time.Millisecond})
		cancel()
		if err != nil || r.Error != "" {
			t.Fatalf("%s client: %v %+v", dialect, err, r)
		}
		got := ts.waitResults(i + 1)[i]
		if got.Test.Dialect != dialect {
			t.Errorf("%s client's upload: the server named it %q", dialect, got.Test.Dialect)
		}
		if got.Receiver == nil || r.Sender == nil || got.Receiver.Bytes != r.Sender.Bytes {
			t.Errorf("%s: the server counted %+v, the client sent %+v", dialect, got.Receiver, r.Sender)
		}
	}
}
