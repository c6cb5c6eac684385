//go:build !linux && !darwin

package zshell

import (
	"context"
	"errors"
)

// StartPTY needs a pty, which this system does not offer here; use Serve
// on another transport.
func StartPTY(ctx context.Context, o Options) (*Shell, string, func(), error) {
	return nil, "", nil, errors.New("zshell: no pty on this system")
}
