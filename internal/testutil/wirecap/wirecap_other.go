//go:build !linux

package wirecap

import (
	"errors"
	"testing"
	"time"
)

// Capture is a running capture; only Linux has one.
type Capture struct{}

// Start skips t: capturing needs Linux's AF_PACKET.
func Start(t testing.TB, ifname string, ports ...uint16) *Capture {
	t.Skip("capturing packets needs Linux (AF_PACKET)")
	return nil
}

// Open returns an error: capturing needs Linux's AF_PACKET.
func Open(ifname string, ports ...uint16) (*Capture, error) {
	return nil, errors.New("wirecap: capturing packets needs Linux (AF_PACKET)")
}

// Stop returns nothing.
func (c *Capture) Stop() []Packet { return nil }

// Packets returns nothing.
func (c *Capture) Packets() []Packet { return nil }

// Wait reports whether done accepts no packets.
func (c *Capture) Wait(timeout time.Duration, done func([]Packet) bool) bool { return done(nil) }

// Stats is empty.
func (c *Capture) Stats() Stats { return Stats{} }
