//go:build !linux

package credential

import (
	"context"
	"io"
)

// readPassword has no echo-free prompt off Linux: the password comes from
// IPERF3_PASSWORD.
func readPassword(context.Context, io.Writer) (string, error) { return "", ErrNoTerminal }
