package engine

import (
	"context"
	"errors"
	"net"
	"os"
	"time"

	"github.com/wirebench/wirebench/internal/udpio"
)

// UDPHandler is called for every datagram read. It returns false to stop
// the receive loop. m.Buf[:m.N] is only valid during the call.
type UDPHandler func(m *udpio.Message) bool

// ReceiveUDP reads datagrams from conn in batches and hands each to h until
// h returns false, ctx is done, or nothing arrives for idle (0 = no idle
// limit). It returns nil on those normal ends and the socket's error
// otherwise. bufSize is the largest datagram it can take whole (larger ones
// arrive truncated).
func ReceiveUDP(ctx context.Context, conn udpio.Conn, bufSize, batch int, idle time.Duration, h UDPHandler) error {
	if batch <= 0 {
		batch = 32
	}
	msgs := make([]udpio.Message, batch)
	for i := range msgs {
		msgs[i].Buf = make([]byte, bufSize)
	}
	// Unblock a pending read when ctx ends.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	for {
		if idle > 0 {
			_ = conn.SetReadDeadline(time.Now().Add(idle))
		}
		if ctx.Err() != nil {
			return nil
		}
		n, err := conn.ReadBatch(msgs)
		for i := 0; i < n; i++ {
			if !h(&msgs[i]) {
				return nil
			}
		}
		if err != nil {
			switch {
			case ctx.Err() != nil, errors.Is(err, os.ErrDeadlineExceeded):
				return nil
			case errors.Is(err, net.ErrClosed):
				return nil
			case isTransientRead(err):
				continue
			default:
				return err
			}
		}
	}
}
