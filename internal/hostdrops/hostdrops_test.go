package hostdrops

import (
	"strings"
	"testing"
)

func TestDeltaAndLocal(t *testing.T) {
	before := Counters{SndbufErrors: 10, SndbufOK: true, QdiscDrops: 100, TxDropped: 4, QdiscOK: true, Interface: "wbl-a", Qdisc: "tbf"}
	after := Counters{SndbufErrors: 25, SndbufOK: true, QdiscDrops: 112, TxDropped: 5, QdiscOK: true, Interface: "wbl-a", Qdisc: "tbf"}
	d := Delta(before, after)
	if d.SndbufErrors != 15 || d.QdiscDrops != 12 || d.TxDropped != 1 || !d.SndbufOK || !d.QdiscOK {
		t.Fatalf("delta %+v", d)
	}
	// SndbufErrors also counts sends retried on a full buffer (no loss):
	// local drops are the qdisc's and the interface's only.
	if n, ok := d.Local(); n != 13 || !ok {
		t.Errorf("Local() = %d, %v; want 13, true", n, ok)
	}
	if s := d.Describe(); !strings.Contains(s, "root qdisc tbf on wbl-a dropped 12, wbl-a tx_dropped 1") || !strings.Contains(s, "SndbufErrors rose by 15") {
		t.Errorf("Describe() = %q", s)
	}

	// Another interface, a counter that went backwards, an unreadable one:
	// not available, never a made-up number.
	moved := after
	moved.Interface = "eth0"
	if d := Delta(before, moved); d.QdiscOK || !d.SndbufOK {
		t.Errorf("interface changed: %+v", d)
	}
	reset := after
	reset.SndbufErrors = 3
	reset.QdiscDrops = 1
	if d := Delta(before, reset); d.SndbufOK || d.QdiscOK {
		t.Errorf("counter went backwards and still counted: %+v", d)
	}
	none := Counters{Why: "send-path drop counters are not available on this OS"}
	d = Delta(none, none)
	if _, ok := d.Local(); ok || !strings.Contains(d.Describe(), "not available") {
		t.Errorf("unreadable counters: %+v, %q", d, d.Describe())
	}
}

// testSNMP is a /proc/net/snmp excerpt; UdpLite must not be taken for Udp.
var testSNMP = []byte("Ip: Forwarding DefaultTTL\nIp: 1 64\n" +
	"Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n" +
	"Udp: 14 2 1 14 0 37\n" +
	"UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n" +
	"UdpLite: 0 0 0 0 0 99\n")

func TestUDPTable(t *testing.T) {
	udp, err := UDPTable(testSNMP)
	if err != nil || udp["InDatagrams"] != 14 || udp["NoPorts"] != 2 || udp["SndbufErrors"] != 37 || len(udp) != 6 {
		t.Errorf("UDPTable = %v, %v", udp, err)
	}
	if _, err := UDPTable([]byte("Ip: Forwarding\nIp: 1\n")); err == nil {
		t.Error("no Udp rows: no error")
	}
}

// A receiver on this host whose buffers overflowed is said so, with at
// most the loss it counted; a receiver elsewhere, or no loss, says nothing.
func TestReceiverOverflow(t *testing.T) {
	before := Counters{RcvbufErrors: 100, RcvbufOK: true}
	d := Delta(before, Counters{RcvbufErrors: 2246, RcvbufOK: true})
	if n := d.ReceiverDropped(2146); n != 2146 {
		t.Errorf("ReceiverDropped(2146) = %d, want 2146 (at most the loss)", n)
	}
	w := d.ReceiverOverflow(2146)
	for _, want := range []string{"overflowed 2146 times", "up to 2146 of the 2146 datagrams it counted lost", "host-wide", "larger buffer"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q lacks %q", w, want)
		}
	}
	for _, c := range []struct {
		d    Drops
		lost int64
	}{{d, 0}, {Drops{}, 2146}, {Delta(before, Counters{RcvbufErrors: 100, RcvbufOK: true}), 10}, {Delta(before, Counters{RcvbufErrors: 50, RcvbufOK: true}), 10}} {
		if w := c.d.ReceiverOverflow(c.lost); w != "" || c.d.ReceiverDropped(c.lost) != 0 {
			t.Errorf("%+v, lost %d: %q, want nothing", c.d, c.lost, w)
		}
	}
}
