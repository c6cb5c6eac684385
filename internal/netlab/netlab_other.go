//go:build !linux

package netlab

import (
	"context"
	"net/netip"

	"github.com/wirebench/wirebench/internal/edtwire"
)

type labSys struct{}

type hostSys struct{}

// New returns ErrNotSupported: labs need Linux network namespaces.
func New(ctx context.Context, cfg Config) (*Lab, error) { return nil, ErrNotSupported }

// Close does nothing and returns nil.
func (l *Lab) Close() error { return nil }

// RouterA returns ok false: there is no lab.
func (l *Lab) RouterA() (ifname string, addr netip.Addr, ok bool) { return "", netip.Addr{}, false }

// Do returns ErrNotSupported without calling fn.
func (h *Host) Do(fn func() error) error { return ErrNotSupported }

// CleanupStale returns ErrNotSupported.
func CleanupStale() (removed []string, err error) { return nil, ErrNotSupported }

// Available returns ErrNotSupported.
func Available() error { return ErrNotSupported }

// WireStats returns nil: there is no lab.
func (l *Lab) WireStats() []edtwire.Stats { return nil }

// WireConfig returns ErrNotSupported: there is no lab.
func (l *Lab) WireConfig() (edtwire.Config, error) { return edtwire.Config{}, ErrNotSupported }

// FillLinks returns nil: there is no lab.
func (l *Lab) FillLinks() []FillLink { return nil }

// FillStats returns nil: there is no lab.
func (l *Lab) FillStats() []FillStats { return nil }

// Filler is a stand-in: fillers need Linux.
type Filler struct{}

// OpenFiller returns ErrNotSupported.
func OpenFiller([]FillLink) (*Filler, error) { return nil, ErrNotSupported }

// Run does nothing.
func (f *Filler) Run() {}

// Stats returns nil.
func (f *Filler) Stats() []FillStats { return nil }

// Close does nothing and returns nil.
func (f *Filler) Close() error { return nil }
