//go:build !linux

package wirecap

import "testing"

// Capture is a running capture; only Linux has one.
type Capture struct{}

// Start skips t: capturing needs Linux's AF_PACKET.
func Start(t testing.TB, ifname string, ports ...uint16) *Capture {
	t.Skip("capturing packets needs Linux (AF_PACKET)")
	return nil
}

// Stop returns nothing.
func (c *Capture) Stop() []Packet { return nil }
