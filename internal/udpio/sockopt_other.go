//go:build !linux

package udpio

import (
	"fmt"
	"net"
)

// oobSpace is 0: no control messages are read off Linux.
const oobSpace = 0

// platformState is empty off Linux.
type platformState struct{}

func (platformState) socketDrops(*net.UDPConn) uint64 { return 0 }

func newConn(uc *net.UDPConn, opt Options) (Conn, error) {
	b := newBase(uc)
	if err := setupBuffers(uc, opt, b); err != nil {
		return nil, err
	}
	return newSingleConn(b), nil
}

// setupBuffers applies the buffer sizes with the standard library; the
// effective sizes are unknown here.
func setupBuffers(uc *net.UDPConn, opt Options, _ *base) error {
	if opt.ReadBuffer > 0 {
		if err := uc.SetReadBuffer(opt.ReadBuffer); err != nil {
			return fmt.Errorf("udpio: set receive buffer to %d bytes: %w", opt.ReadBuffer, err)
		}
	}
	if opt.WriteBuffer > 0 {
		if err := uc.SetWriteBuffer(opt.WriteBuffer); err != nil {
			return fmt.Errorf("udpio: set send buffer to %d bytes: %w", opt.WriteBuffer, err)
		}
	}
	return nil
}

// parseOOB finds nothing: no control messages are requested off Linux.
func parseOOB([]byte) rxMeta { return rxMeta{} }
