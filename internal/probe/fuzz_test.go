package probe

import (
	"testing"

	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// FuzzClassify feeds arbitrary peer bytes to every classifier: none may panic,
// and an opening classified as an iperf2 ack must carry a whole CLIENTHDRACK.
func FuzzClassify(f *testing.F) {
	f.Add(ack218, false)
	f.Add([]byte{9}, false)
	f.Add([]byte{0xFF}, true)
	f.Add([]byte{}, true)
	f.Fuzz(func(t *testing.T, b []byte, ended bool) {
		kind, _ := ClassifyOpening(b, ended)
		if kind == OpeningIperf2Ack && iperf2.ClientHdrAckLen(b) == 0 {
			t.Fatalf("ack verdict for % x", b)
		}
		OpeningNeedsMore(b)
		AckVersion(b)
		EchoReplyOK(b, 1)
		ClassifyUDPReplies([][]byte{b}, iperf2.EchoCheck{Header: b})
	})
}
