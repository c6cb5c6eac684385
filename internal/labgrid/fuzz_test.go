package labgrid

import (
	"bytes"
	"testing"
)

// FuzzRFC2217Parse: whatever a console server sends, in whatever pieces,
// the parser neither panics nor makes up data: it returns no more console
// bytes than arrived, the same ones however the stream is cut, and only
// well-formed three-byte answers.
func FuzzRFC2217Parse(f *testing.F) {
	f.Add([]byte{IAC, WILL, OptEcho, 'a', IAC, IAC, IAC, SB, OptComPort, 101, 0, 1, 0xC2, 0, IAC, SE, '\r', 0}, uint8(3))
	f.Add([]byte{IAC, SB, IAC, IAC, IAC}, uint8(1))
	f.Fuzz(func(t *testing.T, stream []byte, cut uint8) {
		parse := func(size int) ([]byte, []byte) {
			tc := &RFC2217{local: map[byte]bool{}, remote: map[byte]bool{}}
			var data, replies []byte
			for i := 0; i < len(stream); i += size {
				chunk := append([]byte{}, stream[i:min(i+size, len(stream))]...)
				n, r := tc.parseLocked(chunk)
				data = append(data, chunk[:n]...)
				replies = append(replies, r...)
			}
			return data, replies
		}
		whole, replies := parse(max(len(stream), 1))
		pieces, _ := parse(int(cut)%8 + 1)
		if len(whole) > len(stream) || !bytes.Equal(whole, pieces) {
			t.Fatalf("data %q whole, %q in pieces, from %d bytes", whole, pieces, len(stream))
		}
		if len(replies)%3 != 0 {
			t.Fatalf("replies %v", replies)
		}
		for i := 0; i < len(replies); i += 3 {
			if replies[i] != IAC || replies[i+1] < WILL {
				t.Fatalf("reply %v", replies[i:i+3])
			}
		}
	})
}
