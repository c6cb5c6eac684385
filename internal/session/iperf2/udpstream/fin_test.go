package udpstream

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// TestFinPaddedForTheReport: with FinLen longer than the data, the FIN of
// an 18-byte stream is FinLen long, carries what a datagram of that length
// would (the whole test header after the datagram header, zeros after
// it), and a receiver answering it has room for the transit summary;
// the same stream's FIN without FinLen is as long as its data, and its
// report leaves the summary out.
func TestFinPaddedForTheReport(t *testing.T) {
	h := iperf2.NewClientHeader(true, 1, 5001)
	hdr := h.AppendUDPTo(nil)
	s := &Sender{Layout: iperf2.LayoutModern, Header: hdr, Length: 18, FinLen: iperf2.MinDatagramForLatency}
	tmpl := s.Template(session.FillPattern)
	fin := s.finTemplate(tmpl)
	hl := iperf2.LayoutModern.HeaderLen()
	if len(fin) != iperf2.MinDatagramForLatency || !bytes.Equal(fin[:hl], tmpl[:hl]) {
		t.Fatalf("padded FIN of %d bytes, want %d beginning with the data's datagram header", len(fin), iperf2.MinDatagramForLatency)
	}
	if !bytes.Equal(fin[hl:hl+len(hdr)], hdr) || !bytes.Equal(fin[hl+len(hdr):], make([]byte, len(fin)-hl-len(hdr))) {
		t.Error("the padded FIN does not carry the whole test header followed by zeros")
	}
	if got := (&Sender{Layout: iperf2.LayoutModern, Length: 1470, FinLen: 202}).finTemplate(make([]byte, 1470)); len(got) != 1470 {
		t.Errorf("a FinLen below the data's length changed the FIN to %d bytes", len(got))
	}
	for _, c := range []struct {
		fin         []byte
		wantSummary bool
	}{{fin, true}, {(&Sender{Layout: iperf2.LayoutModern, Header: hdr, Length: 18}).finTemplate(tmpl), false}} {
		rx := NewReceiverAs(netip.MustParseAddrPort("127.0.0.1:9"), iperf2.LayoutModern, true, time.Unix(1_700_000_000, 0))
		for id := int64(1); id <= 3; id++ {
			d := append([]byte(nil), tmpl...)
			iperf2.PutDatagram(d, iperf2.LayoutModern, id, time.Unix(1_700_000_000, int64(id)*1e6))
			rx.Feed(d, time.Unix(1_700_000_000, int64(id)*1e6+50_000))
		}
		f := append([]byte(nil), c.fin...)
		iperf2.PutDatagram(f, iperf2.LayoutModern, -4, time.Unix(1_700_000_000, 4e6))
		rep := rx.Feed(f, time.Unix(1_700_000_000, 4e6+50_000))
		r, _, err := iperf2.ParseServerReport(rep)
		if err != nil {
			t.Fatalf("FIN of %d bytes: report of %d bytes unreadable: %v", len(c.fin), len(rep), err)
		}
		if got := r.WB != nil && r.WB.HasLatency; got != c.wantSummary {
			t.Errorf("FIN of %d bytes: report of %d bytes with a transit summary %v, want %v", len(c.fin), len(rep), got, c.wantSummary)
		}
	}
}

// TestCountersAtPublishAndFIN: Feed leaves a test's counters to the
// owner's Publish (once per read), and the FIN publishes them itself, so
// a test's final counts never wait for a read's end; EndIdle does too.
func TestCountersAtPublishAndFIN(t *testing.T) {
	s := &Sender{Layout: iperf2.LayoutModern, Length: 100}
	tmpl := s.Template(session.FillPattern)
	base := time.Unix(1_700_000_000, 0)
	feed := func(rx *Receiver, id int64) {
		d := append([]byte(nil), tmpl...)
		iperf2.PutDatagram(d, iperf2.LayoutModern, id, base.Add(time.Duration(id)*time.Millisecond))
		rx.Feed(d, base.Add(time.Duration(id)*time.Millisecond+time.Microsecond))
	}
	rx := NewReceiverAs(netip.MustParseAddrPort("127.0.0.1:9"), iperf2.LayoutModern, false, base)
	for id := int64(1); id <= 3; id++ {
		feed(rx, id)
	}
	if got := rx.Counters().Packets.Load(); got != 0 || rx.Received() != 3 {
		t.Fatalf("before Publish: counters show %d datagrams, Received %d; want 0 and 3", got, rx.Received())
	}
	rx.Publish()
	if got := rx.Counters().Packets.Load(); got != 3 {
		t.Fatalf("after Publish: counters show %d datagrams, want 3", got)
	}
	feed(rx, 4)
	feed(rx, -5)
	if got := rx.Counters().Snapshot(); got.Packets != 5 || got.Bytes != 500 || !rx.Done() {
		t.Fatalf("after the FIN: counters %+v (done %v), want 5 datagrams and 500 bytes", got, rx.Done())
	}
	idle := NewReceiverAs(netip.MustParseAddrPort("127.0.0.1:9"), iperf2.LayoutModern, false, base)
	feed(idle, 1)
	feed(idle, 2)
	idle.EndIdle()
	if got := idle.Counters().Packets.Load(); got != 2 {
		t.Fatalf("after EndIdle: counters show %d datagrams, want 2", got)
	}
}
