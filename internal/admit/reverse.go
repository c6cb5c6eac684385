// Package admit decides which tests a server takes on: where it may send
// traffic a client asked for (reverse and connect-back tests), and how many
// tests one source address may open at once and per second. It is pure
// logic with an injectable clock: no sockets, no goroutines.
package admit

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// localNet is an address block a server may send to by default: traffic
// aimed there cannot leave the site (or the carrier, for CGNAT), so a
// spoofed source can at most reflect it inside the network it came from.
type localNet struct {
	prefix netip.Prefix
	class  string
}

var localNets = []localNet{
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (RFC 1918)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (RFC 1918)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (RFC 1918)"},
	// RFC 6598 shared address space: like RFC 1918 it is never routed on
	// the Internet, and overlay VPNs (Tailscale and others) number their
	// nodes from it, so lab hosts reach each other through it.
	{netip.MustParsePrefix("100.64.0.0/10"), "shared CGNAT (RFC 6598)"},
	// RFC 2544 benchmarking space (RFC 6890: not globally reachable): set
	// aside for test labs, and the network `wirebench lab up` numbers its
	// hosts from, so a lab's matrix runs as printed.
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (RFC 2544)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (ULA)"},
}

// LocalClasses names, for messages and docs, the networks a server sends to
// without --allow-reverse.
const LocalClasses = "loopback, private (RFC 1918), shared CGNAT (100.64.0.0/10), benchmarking (198.18.0.0/15), link-local or unique local (fc00::/7)"

// LocalClassesBrief is LocalClasses for a hint that has more to say.
const LocalClassesBrief = "loopback, private, CGNAT, benchmarking (198.18.0.0/15), link-local or ULA"

// Classify returns the local network class addr belongs to ("loopback",
// "private (RFC 1918)", …), or "" when it is on none of them. An
// IPv4-mapped IPv6 address is classified by its IPv4 address.
func Classify(addr netip.Addr) string {
	addr = plain(addr)
	for _, n := range localNets {
		if n.prefix.Contains(addr) {
			return n.class
		}
	}
	return ""
}

// plain drops what would keep addr from matching a prefix: the IPv4
// mapping and an IPv6 zone (netip.Prefix.Contains is false for both).
func plain(addr netip.Addr) netip.Addr { return addr.Unmap().WithZone("") }

// AllowAny is the --allow-reverse value that allows every source.
const AllowAny = "any"

// ParseAllow parses --allow-reverse values: each one a CIDR prefix, a
// single address, or "any" (every IPv4 and IPv6 source), possibly several
// separated by commas. IPv4-mapped IPv6 prefixes (::ffff:a.b.c.d/n with
// n ≥ 96) become the IPv4 prefix they denote, as addresses are matched
// after unmapping.
func ParseAllow(values []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			p, err := parseOne(s)
			if err != nil {
				return nil, err
			}
			out = append(out, p...)
		}
	}
	return out, nil
}

func parseOne(s string) ([]netip.Prefix, error) {
	if strings.EqualFold(s, AllowAny) {
		return []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}, nil
	}
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return nil, fmt.Errorf("%q is not a CIDR prefix like 198.18.0.0/15 or 2001:db8::/32, an address, or %q", s, AllowAny)
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR prefix like 198.18.0.0/15 or 2001:db8::/32, an address, or %q", s, AllowAny)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Addr().Zone() != "" {
		return nil, fmt.Errorf("%q: a zone is not allowed in a prefix", s)
	}
	if a := p.Addr(); a.Is4In6() {
		if p.Bits() < 96 {
			return nil, fmt.Errorf("%q: an IPv4-mapped prefix needs at least 96 bits", s)
		}
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return []netip.Prefix{p.Masked()}, nil
}

// ErrReverseRefused is wrapped by every refusal of Reverse.Check.
var ErrReverseRefused = errors.New("reverse and connect-back traffic refused")

// Reverse is the rule for tests that make the server send (UDP reverse,
// connect-back): they may go only to their own source, and only when that
// source is on a local network (see Classify) or inside Allow, and not
// inside Deny. The zero value allows the local networks only.
type Reverse struct {
	// Allow lists further sources the server may send to
	// (--allow-reverse).
	Allow []netip.Prefix
	// Deny lists sources the server never sends to, local or allowed
	// (--deny-reverse): it takes precedence over both.
	Deny []netip.Prefix
}

// Check returns nil when the server may send to addr, or an error wrapping
// ErrReverseRefused that says why not.
func (r Reverse) Check(addr netip.Addr) error {
	addr = plain(addr)
	for _, p := range r.Deny {
		if p.Contains(addr) {
			return fmt.Errorf("%w: %s is in this server's --deny-reverse %s", ErrReverseRefused, addr, p)
		}
	}
	if Classify(addr) != "" {
		return nil
	}
	for _, p := range r.Allow {
		if p.Contains(addr) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is not on a %s network and not in --allow-reverse; this server sends only to such sources, so that a spoofed test request cannot aim its traffic at a third party",
		ErrReverseRefused, addr, LocalClasses)
}
