package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/stats"
)

// zeroCopyConn sends each write from a file holding the payload, through
// TCPConn.ReadFrom, which the Go runtime turns into sendfile(2) on Linux
// and darwin (TransmitFile on windows): the payload goes from the page cache
// to the socket without being copied from our memory, as iperf3's -Z does.
// Every write must be a prefix of the payload the file holds; a longer one,
// or one that differs, is refused rather than sent wrong.
type zeroCopyConn struct {
	*net.TCPConn
	payload []byte
	f       *os.File
	mu      sync.Mutex
	lr      io.LimitedReader
}

// errZeroCopyPayload: a write that is not a prefix of the file's payload.
var errZeroCopyPayload = errors.New("zero-copy send: write is not the test payload")

// newZeroCopy wraps c so its writes of payload (or a prefix of it) go out
// by sendfile. Close the returned closer after the test.
func newZeroCopy(c net.Conn, payload []byte) (net.Conn, func(), error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil, nil, fmt.Errorf("zero-copy send (-Z) needs a TCP connection, not %T", c)
	}
	f, err := os.CreateTemp("", "wirebench-zerocopy-*")
	if err != nil {
		return nil, nil, fmt.Errorf("zero-copy send (-Z): creating the payload file: %w", err)
	}
	cleanup := func() { f.Close(); os.Remove(f.Name()) }
	if _, err := f.Write(payload); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("zero-copy send (-Z): writing the payload file: %w", err)
	}
	return &zeroCopyConn{TCPConn: tc, payload: payload, f: f}, cleanup, nil
}

// Write sends b, a prefix of the payload, from the file.
func (z *zeroCopyConn) Write(b []byte) (int, error) {
	if len(b) > len(z.payload) || len(b) > 0 && &b[0] != &z.payload[0] {
		return 0, errZeroCopyPayload
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	var sent int
	for sent < len(b) {
		if _, err := z.f.Seek(int64(sent), io.SeekStart); err != nil {
			return sent, fmt.Errorf("zero-copy send: %w", err)
		}
		z.lr = io.LimitedReader{R: z.f, N: int64(len(b) - sent)}
		n, err := z.TCPConn.ReadFrom(&z.lr)
		sent += int(n)
		if err != nil {
			return sent, err
		}
		if n == 0 {
			return sent, io.ErrShortWrite
		}
	}
	return sent, nil
}

// SendTCP is engine.SendTCP, through sendfile when zeroCopy (-Z) is set.
func SendTCP(ctx context.Context, c net.Conn, zeroCopy bool, cfg engine.TCPSendConfig, counters *stats.Counters) (engine.TCPResult, error) {
	if !zeroCopy {
		return engine.SendTCP(ctx, c, cfg, counters)
	}
	zc, done, err := newZeroCopy(c, cfg.Buffer)
	if err != nil {
		return engine.TCPResult{}, err
	}
	defer done()
	return engine.SendTCP(ctx, zc, cfg, counters)
}
