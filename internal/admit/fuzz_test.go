package admit

import (
	"net/netip"
	"testing"
)

// FuzzParseAllow: any --allow-reverse value is parsed or rejected without
// panicking; what is accepted is masked, unmapped, zone-free, and allows
// the address it was written with.
func FuzzParseAllow(f *testing.F) {
	for _, s := range []string{"198.18.0.0/15", "any", "::ffff:10.0.0.0/104", "2001:db8::1", "1.2.3.4,5.6.7.0/24", "fe80::1%eth0", "/", ",,"} {
		f.Add(s, []byte{198, 18, 0, 1})
	}
	f.Fuzz(func(t *testing.T, v string, raw []byte) {
		ps, err := ParseAllow([]string{v})
		if err != nil {
			return
		}
		for _, p := range ps {
			if !p.IsValid() || p != p.Masked() || p.Addr().Is4In6() || p.Addr().Zone() != "" {
				t.Fatalf("ParseAllow(%q) gave %v", v, p)
			}
			if err := (Reverse{Allow: []netip.Prefix{p}}).Check(p.Addr()); err != nil {
				t.Fatalf("the prefix %v from %q refuses its own address: %v", p, v, err)
			}
		}
		if a, ok := netip.AddrFromSlice(raw); ok {
			_ = Classify(a)
			_ = (Reverse{Allow: ps}).Check(a)
		}
	})
}
