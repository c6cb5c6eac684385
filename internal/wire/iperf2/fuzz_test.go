package iperf2

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"
	"unicode/utf8"
)

func FuzzParseClientHeader(f *testing.F) {
	f.Add(capTCPClientHdr)
	f.Add(capUDPClientFirst[16:])
	f.Add(mustHex("80000001000000010000138a"))
	f.Add([]byte{0x04, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, n, err := ParseClientHeader(b)
		if err != nil {
			if !errors.Is(err, ErrShort) || n != 0 {
				t.Fatalf("err %v n %d", err, n)
			}
			return
		}
		if n > len(b) || (n != h.Len() && !h.HasBarrier) {
			t.Fatalf("consumed %d of %d, Len %d", n, len(b), h.Len())
		}
		_ = ClientHeaderLen(h.Flags, true)
		_ = ClientHeaderLen(h.Flags, false)
		_, _ = h.Duration()
		_, _ = h.ByteCount()
		// Re-marshalling reproduces the input except for the LEN bits AppendTo rewrites.
		re := h.AppendTo(nil)
		if len(re) != h.Len() || !bytes.Equal(re[4:20], b[4:20]) {
			t.Fatalf("re-marshal differs:\n%x\n%x", re, b[:n])
		}
	})
}

func FuzzParseServerReport(f *testing.F) {
	f.Add(capReportModern)
	f.Add(capReportEcho)
	f.Add(mustHex(legacyGolden))
	f.Add(make([]byte, 56))
	f.Add(AppendWBExtension((&ServerReport{Datagrams: 9}).AppendModern(nil, nil), WBExtension{
		HasDuplicates: true, Diagnosis: "d", HasLatency: true, Latency: WBLatency{MinUS: -5, P50US: 3, MaxUS: 9, Count: 9}}, 1470))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, l, err := ParseServerReport(b)
		c := EchoCheck{Layout: l, Header: capFIN2[16:76], FirstFIN: -1, LastFIN: -300}
		_ = c.IsEcho(b)
		if err != nil {
			if !errors.Is(err, ErrShort) && !errors.Is(err, ErrNotReport) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		// A successfully parsed report re-marshals to a report that parses back to the same counts.
		var out []byte
		if l == LayoutModern {
			out = r.AppendModern(nil, b)
		} else {
			out = r.AppendLegacy(nil, b)
		}
		r2, l2, err := ParseServerReport(out)
		const u32s = math.MaxUint32 * time.Second // beyond this, stop and jitter are clamped when written
		if err != nil || l2 != l || r2.TotalBytes != r.TotalBytes || r2.Datagrams != r.Datagrams ||
			r2.Errors != r.Errors || r2.Stop != min(r.Stop, u32s) || r2.Jitter != min(r.Jitter, u32s) {
			t.Fatalf("re-parse: %v %v\n%+v\n%+v", l2, err, r2, r)
		}
		// A wirebench extension that fits whole re-encodes to itself.
		if r.WB != nil && len(r.WB.Diagnosis) <= 200 && utf8.ValidString(r.WB.Diagnosis) {
			out = AppendWBExtension(r.AppendModern(nil, b), *r.WB, 1470)
			if r3, _, err := ParseServerReport(out); err != nil || r3.WB == nil || *r3.WB != *r.WB {
				t.Fatalf("extension re-parse: %v\n%+v\n%+v", err, r3.WB, *r.WB)
			}
		}
	})
}

func FuzzParseDatagram(f *testing.F) {
	f.Add(capUDPClientFirst, true)
	f.Add(mustHex(capUDPClientFINs[0]), false)
	f.Add([]byte{1, 2, 3}, true)
	f.Fuzz(func(t *testing.T, b []byte, seq64 bool) {
		for _, l := range []Layout{LayoutModern, LayoutLegacy} {
			id, sec, usec, ok := ParseDatagram(b, l, seq64)
			if ok != (len(b) >= l.HeaderLen()) {
				t.Fatalf("ok = %v for %d bytes", ok, len(b))
			}
			if !ok {
				continue
			}
			// PutDatagram writes back the same id bits and timestamp words.
			out := make([]byte, l.HeaderLen())
			PutDatagram(out, l, id, timeOf(sec, usec))
			if !bytes.Equal(out[:4], b[:4]) || (l == LayoutModern && seq64 && !bytes.Equal(out[12:16], b[12:16])) {
				t.Fatalf("id mismatch %x vs %x", out, b[:l.HeaderLen()])
			}
			if id2, _, _, _ := ParseDatagram(out, l, seq64); id2 != id {
				t.Fatalf("id %d re-parsed as %d", id, id2)
			}
		}
	})
}

func FuzzDetectUDPLayout(f *testing.F) {
	f.Add(capUDPClientFirst)
	f.Add(legacyDatagram(0, 0, 'z'))
	f.Add(make([]byte, 20))
	f.Fuzz(func(t *testing.T, b []byte) {
		l := DetectUDPLayout(b)
		if l != LayoutModern && l != LayoutLegacy {
			t.Fatalf("layout %v", l)
		}
		_ = ClientHdrAckLen(b)
	})
}
