//go:build linux

package netlab

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/wirebench/wirebench/internal/edtwire"
)

// startWire starts the exact wire (Config.Wire = WireExact): a
// departure-time forwarder in R, in this process, between wbl-ra and
// wbl-rb. A→B runs at the rate, B→A too with ShapeBothWays (else
// unshaped). IP forwarding stays off in R, so the kernel there drops what
// it is sent for the far host (silently: with forwarding off Linux sends
// no ICMP) and the forwarder is the only way across.
//
// A named lab (Config.Lab) outlives this process, so its forwarder must
// run in a process of its own in R: startWire then starts nothing, and the
// caller runs WireConfig's configuration there (`wirebench lab up --wire
// exact` does).
func (l *Lab) startWire() error {
	if l.Config.Lab != "" {
		l.R.Shaped = true
		return nil
	}
	c, err := l.WireConfig()
	if err != nil {
		return err
	}
	var w *edtwire.Wire
	if err := l.R.Do(func() (err error) {
		w, err = edtwire.Open(c)
		return err
	}); err != nil {
		return fmt.Errorf("netlab: start the exact wire in %s: %w", l.R.Name, err)
	}
	w.Run()
	l.sys.wire = w
	l.R.Shaped = true
	return nil
}

// WireConfig returns the exact wire's forwarder configuration for this
// lab, to be opened in R's namespace: both directions, each with the far
// host's MAC and addresses.
func (l *Lab) WireConfig() (edtwire.Config, error) {
	if l.R == nil {
		return edtwire.Config{}, errors.New("netlab: the lab has no router for a wire")
	}
	macOf := func(h *Host) ([]byte, error) {
		link, err := h.sys.nl.LinkByName(h.Ifname)
		if err != nil {
			return nil, fmt.Errorf("netlab: find %s in %s: %w", h.Ifname, h.Name, err)
		}
		return link.Attrs().HardwareAddr, nil
	}
	macA, err := macOf(l.A)
	if err != nil {
		return edtwire.Config{}, err
	}
	macB, err := macOf(l.B)
	if err != nil {
		return edtwire.Config{}, err
	}
	dsts := func(h *Host) []netip.Addr {
		out := []netip.Addr{h.Addr}
		if h.Addr6.IsValid() {
			out = append(out, h.Addr6)
		}
		return out
	}
	back := uint64(0)
	if l.Config.ShapeBothWays {
		back = l.Config.RateBPS
	}
	return edtwire.Config{
		Latency: l.Config.latency(),
		Links: []edtwire.Link{
			{Name: "a>b", In: ifnameRA, Out: ifnameRB, DstMAC: macB, Dst: dsts(l.B), RateBPS: l.Config.RateBPS},
			{Name: "b>a", In: ifnameRB, Out: ifnameRA, DstMAC: macA, Dst: dsts(l.A), RateBPS: back},
		},
	}, nil
}

// WireStats returns the exact wire's counters per direction ("a>b",
// "b>a"), or nil when the lab has no exact wire running in this process.
func (l *Lab) WireStats() []edtwire.Stats {
	if l.sys.wire == nil {
		return nil
	}
	return l.sys.wire.Stats()
}
