package iperf3

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind (Conn's
// cancellation hooks, the interop tests' readers).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
