package session

import (
	"sync"

	"github.com/wirebench/wirebench/internal/udpio"
)

// FillPattern fills b with iperf's "0123456789" pattern, which every iperf2
// peer accepts as data.
func FillPattern(b []byte) {
	for i := range b {
		b[i] = '0' + byte(i%10)
	}
}

// LockedConn serialises writes to a UDP socket shared by the server's
// reader (which sends reports) and the senders of reverse tests.
type LockedConn struct {
	udpio.Conn
	mu sync.Mutex
}

// WriteBatch sends under the lock.
func (c *LockedConn) WriteBatch(msgs []udpio.Message) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Conn.WriteBatch(msgs)
}
