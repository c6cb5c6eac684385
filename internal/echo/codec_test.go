package echo

import (
	"bytes"
	"errors"
	"testing"
)

func TestCodecRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		m    Message
		want int // encoded length
	}{
		{"request header only", Message{Kind: KindRequest, Len: HeaderLen, ID: 1, Sent: 42}, HeaderLen},
		{"request padded", Message{Kind: KindRequest, Len: 1400, ID: 1<<63 + 5, Sent: -7}, 1400},
		{"largest", Message{Kind: KindReply, Len: MaxLen, ID: 9, Sent: 1e18}, MaxLen},
		{"bye, length defaulted", Message{Kind: KindBye}, HeaderLen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Append([]byte("prefix"), tt.m)
			if !bytes.HasPrefix(b, []byte("prefix")) || len(b) != 6+tt.want {
				t.Fatalf("Append gave %d bytes after the prefix, want %d", len(b)-6, tt.want)
			}
			got, err := Parse(b[6:])
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := tt.m
			want.Len = tt.want
			if got != want {
				t.Errorf("Parse = %+v, want %+v", got, want)
			}
			if !bytes.Equal(b[6+HeaderLen:], make([]byte, tt.want-HeaderLen)) {
				t.Error("padding is not zeros")
			}
		})
	}
}

func TestCodecGolden(t *testing.T) {
	b := Append(nil, Message{Kind: KindRequest, Len: 26, ID: 0x0102030405060708, Sent: 0x1112131415161718})
	want := []byte{'!', 'W', 'B', 'E', 1, 1, 0, 26, 1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0, 0}
	if !bytes.Equal(b, want) {
		t.Errorf("encoded % x\nwant    % x", b, want)
	}
}

func TestParseErrors(t *testing.T) {
	good := Append(nil, Message{Kind: KindRequest, Len: 32, ID: 3})
	mod := func(i int, v byte) []byte { b := bytes.Clone(good); b[i] = v; return b }
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrShort},
		{"short", good[:HeaderLen-1], ErrShort},
		{"magic", mod(0, 'W'), ErrMagic},
		{"version", mod(4, 2), ErrVersion},
		{"kind zero", mod(5, 0), ErrKind},
		{"kind four", mod(5, 4), ErrKind},
		{"length under header", mod(7, 10), ErrLength},
		{"length over datagram", mod(7, 33), ErrLength},
		{"datagram over length", append(bytes.Clone(good), 0), ErrLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse(tt.b); !errors.Is(err, tt.want) {
				t.Errorf("Parse error %v, want %v", err, tt.want)
			}
		})
	}
}

// TestMagicCollisions checks that what other clients send first is never
// taken for an echo message, and that the magic carries none of iperf2's
// header bits (so a real iperf2 server takes a probe for plain data).
func TestMagicCollisions(t *testing.T) {
	firsts := map[string][]byte{
		"iperf2 2.0.5 flags":     {0x80, 0, 0, 0},
		"iperf2 2.1 flags":       {0x88, 0, 0, 0},
		"iperf2 enhanced":        {0xC8, 0, 0, 0},
		"zeros (zperf, ESP-IDF)": {0, 0, 0, 0},
		"counter 1":              {0, 0, 0, 1},
		"ascii pattern":          []byte("0123"),
		"zzzz":                   []byte("zzzz"),
		"iperf3 cookie":          []byte("abcd"),
		"iperf3 cookie digits":   []byte("2345"),
	}
	for name, b := range firsts {
		if HasMagic(b) {
			t.Errorf("%s (% x) matches the echo magic", name, b)
		}
	}
	const version1, extend, version2 = 0x80, 0x40, 0x04
	if Magic[0]&(version1|extend|version2) != 0 {
		t.Errorf("magic's first byte %#x has an iperf2 header bit", Magic[0])
	}
	for _, c := range []byte(Magic) {
		if (c >= 'a' && c <= 'z') || (c >= '2' && c <= '7') {
			continue
		}
		return // at least one byte outside iperf3's cookie alphabet
	}
	t.Error("magic is spelled in iperf3's cookie alphabet")
}

func FuzzParse(f *testing.F) {
	f.Add(Append(nil, Message{Kind: KindRequest, Len: 64, ID: 1}))
	f.Add(Append(nil, Message{Kind: KindBye}))
	f.Add([]byte("!WBE"))
	f.Add([]byte{0x80, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		if m.Len != len(b) || m.Len < HeaderLen || m.Kind < KindRequest || m.Kind > KindBye {
			t.Fatalf("Parse accepted %+v from %d bytes", m, len(b))
		}
		if !matchUDP(b) && m.Kind != KindReply {
			t.Fatal("matchUDP refused a valid request")
		}
		// Re-encoding gives the same header.
		if got := Append(nil, m); !bytes.Equal(got[:HeaderLen], b[:HeaderLen]) {
			t.Fatalf("re-encoded header % x, want % x", got[:HeaderLen], b[:HeaderLen])
		}
	})
}

func FuzzServeTCP(f *testing.F) {
	f.Add(Append(Append(nil, Message{Kind: KindRequest, Len: 30, ID: 1}), Message{Kind: KindBye}))
	f.Add([]byte("!WBE\x01\x01\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := NewServer(ServerConfig{})
		out := serveBytes(t, s, b)
		if len(out) > len(b)+4 {
			t.Fatalf("echoed %d bytes for %d in", len(out), len(b))
		}
	})
}
