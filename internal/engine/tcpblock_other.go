//go:build !linux

package engine

import (
	"context"
	"net"
	"time"

	"github.com/wirebench/wirebench/internal/stats"
)

// sendBlocking is Linux only; elsewhere SendTCP's own loop does the send.
func sendBlocking(context.Context, net.Conn, TCPSendConfig, *stats.Counters, *TCPResult, time.Time) (bool, error) {
	return false, nil
}
