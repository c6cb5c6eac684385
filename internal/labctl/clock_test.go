package labctl

import (
	"context"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
)

// TestLabHostAddr: an address of a lab host whose state file is there and
// whose namespace exists is on this machine; one whose namespace is gone,
// another lab's file shape (a relay's), and an address no host has are not.
func TestLabHostAddr(t *testing.T) {
	dir := t.TempDir()
	st := State{Schema: "wirebench/1", Kind: "lab", Name: "wb", Hosts: map[string]Host{
		"a": {Namespace: "wbl-lab-wb-a", Addr: "198.18.0.1/30"},
		"b": {Namespace: "wbl-lab-wb-b", Addr: "198.18.0.6/30"},
	}}
	if err := WriteStateFile(filepath.Join(dir, "lab-wb.json"), st); err != nil {
		t.Fatal(err)
	}
	st.Name = "other"
	if err := WriteStateFile(filepath.Join(dir, "lab-wb-relay-5201.json"), st); err != nil {
		t.Fatal(err)
	}
	exists := func(lab string) ([]string, error) {
		if lab == "wb" {
			return []string{"wbl-lab-wb-a"}, nil // b's namespace is gone
		}
		return []string{"wbl-lab-other-a", "wbl-lab-other-b"}, nil
	}
	where, ok := labHostAddr(dir, netip.MustParseAddr("198.18.0.1"), exists)
	if !ok || !strings.Contains(where, "host a of lab wb") {
		t.Errorf("198.18.0.1: %v (%s), want host a of lab wb", ok, where)
	}
	for _, ip := range []string{"198.18.0.6", "198.18.0.2", "192.0.2.1"} {
		if where, ok := labHostAddr(dir, netip.MustParseAddr(ip), exists); ok {
			t.Errorf("%s taken for a lab host: %s", ip, where)
		}
	}
	if where, ok := labHostAddr(filepath.Join(dir, "none"), netip.MustParseAddr("198.18.0.1"), exists); ok {
		t.Errorf("no state directory: %s", where)
	}
}

// TestSameClock: loopback and this machine's own addresses share its
// clock, found by themselves; any other address does not unless
// --same-clock says so; --same-clock=false overrides what is found.
func TestSameClock(t *testing.T) {
	own := []net.Addr{&net.IPNet{IP: net.ParseIP("198.18.0.1"), Mask: net.CIDRMask(24, 32)}}
	for _, c := range []struct {
		ip   string
		want bool
	}{{"127.0.0.1", true}, {"127.3.2.1", true}, {"::1", true}, {"198.18.0.1", true}, {"::ffff:198.18.0.1", true}, {"198.18.0.2", false}, {"2001:db8::1", false}} {
		if got, _ := IsLocalAddr(netip.MustParseAddr(c.ip).Unmap(), own); got != c.want {
			t.Errorf("%s local: %v, want %v", c.ip, got, c.want)
		}
	}
	ctx := context.Background()
	if ok, why := SameClock(ctx, "127.0.0.1", false, false); !ok || !strings.HasPrefix(why, "found: ") {
		t.Errorf("127.0.0.1 with the flag not given: %v (%s), want found", ok, why)
	}
	// 192.0.2.1 (documentation range) is nobody's interface address here.
	if ok, why := SameClock(ctx, "192.0.2.1", false, false); ok {
		t.Errorf("192.0.2.1 taken for the same clock: %s", why)
	}
	if ok, _ := SameClock(ctx, "192.0.2.1", true, true); !ok {
		t.Error("--same-clock not heeded")
	}
	if ok, why := SameClock(ctx, "127.0.0.1", true, false); ok || !strings.Contains(why, "--same-clock=false") {
		t.Errorf("127.0.0.1 with --same-clock=false: %v (%s), want not shared", ok, why)
	}
}
