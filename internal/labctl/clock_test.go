package labctl

import (
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
