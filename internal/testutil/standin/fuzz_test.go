package standin

import (
	"bytes"
	"testing"
)

// FuzzParseClientHdrV1: any input either errors (short) or round-trips.
func FuzzParseClientHdrV1(f *testing.F) {
	f.Add(ClientHdrV1{Flags: 0x80000001, NumThreads: 1, MPort: 5001, Amount: -1000}.Bytes())
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseClientHdrV1(b)
		if (err != nil) != (len(b) < clientHdrV1Len) {
			t.Fatalf("len %d: err %v", len(b), err)
		}
		if err == nil && !bytes.Equal(h.Bytes(), b[:clientHdrV1Len]) {
			t.Fatalf("round trip differs")
		}
	})
}

// FuzzParseServerReport: any input at offsets 12 and 16 either errors
// (short) or round-trips.
func FuzzParseServerReport(f *testing.F) {
	f.Add(make([]byte, 52))
	f.Add(make([]byte, 128))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, off := range []int{legacyHdrLen, modernHdrLen} {
			r, err := ParseServerReport(b, off)
			if (err != nil) != (len(b) < off+serverHdrLen) {
				t.Fatalf("len %d off %d: err %v", len(b), off, err)
			}
			if err != nil {
				continue
			}
			out := make([]byte, serverHdrLen)
			r.put(out)
			if !bytes.Equal(out, b[off:off+serverHdrLen]) {
				t.Fatalf("round trip differs at %d", off)
			}
		}
	})
}
