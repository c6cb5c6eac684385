package udpstream

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// heldTestDatagram is a 24-byte modern-layout datagram with id.
func heldTestDatagram(id uint32) []byte {
	b := make([]byte, 24)
	binary.BigEndian.PutUint32(b, id)
	return b
}

func TestTakeHeld(t *testing.T) {
	at := time.Unix(1, 0)
	newRecv := func() *Receiver {
		r := &Receiver{layout: iperf2.LayoutModern, late: 3}
		for _, id := range []uint32{1, 2, 5} {
			b := heldTestDatagram(id)
			r.held = append(r.held, Held{B: b, At: at})
			r.heldBytes += len(b)
		}
		return r
	}

	r := newRecv()
	start := r.TakeHeld(heldTestDatagram(3))
	if len(start) != 2 || r.late != 1 || r.held != nil || r.heldBytes != 0 {
		t.Errorf("opening id 3: took %d held (want 2), late %d (want 1), %d held left, %d bytes", len(start), r.late, len(r.held), r.heldBytes)
	}

	// A new test in the legacy layout: nothing held is its start.
	legacy := make([]byte, 24)
	binary.BigEndian.PutUint32(legacy[16:], 5)
	if iperf2.DetectUDPLayout(legacy) != iperf2.LayoutLegacy {
		t.Fatal("the test's legacy datagram is not detected as legacy")
	}
	r = newRecv()
	start = r.TakeHeld(legacy)
	if len(start) != 0 || r.late != 3 || r.held != nil || r.heldBytes != 0 {
		t.Errorf("legacy opening: took %d held (want 0), late %d (want 3), %d held left, %d bytes", len(start), r.late, len(r.held), r.heldBytes)
	}
}
