//go:build !linux

package netlab

import "context"

type labSys struct{}

type hostSys struct{}

// New returns ErrNotSupported: labs need Linux network namespaces.
func New(ctx context.Context, cfg Config) (*Lab, error) { return nil, ErrNotSupported }

// Close does nothing and returns nil.
func (l *Lab) Close() error { return nil }

// Do returns ErrNotSupported without calling fn.
func (h *Host) Do(fn func() error) error { return ErrNotSupported }

// CleanupStale returns ErrNotSupported.
func CleanupStale() (removed []string, err error) { return nil, ErrNotSupported }

// Available returns ErrNotSupported.
func Available() error { return ErrNotSupported }
