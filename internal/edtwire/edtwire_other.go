//go:build !linux

package edtwire

// Wire is a running forwarder; on this system Open always fails.
type Wire struct{}

// Open returns ErrNotSupported: packet sockets are Linux only.
func Open(Config) (*Wire, error) { return nil, ErrNotSupported }

// Run does nothing here.
func (w *Wire) Run() {}

// Stats returns nothing here.
func (w *Wire) Stats() []Stats { return nil }

// Close does nothing here.
func (w *Wire) Close() error { return nil }
