package ping

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// v4Header builds a minimal IPv4 header for a quoted or received datagram.
func v4Header(proto byte, total int) []byte {
	h := make([]byte, 20)
	h[0], h[9] = 0x45, proto
	binary.BigEndian.PutUint16(h[2:], uint16(total))
	return h
}

func TestParseReply(t *testing.T) {
	echo4, _ := MarshalEcho(false, 0x1234, 7, Payload(7, 10))
	echo4[0] = 0
	echo6, _ := MarshalEcho(true, 0x1234, 8, Payload(8, 10))
	echo6[0] = 129
	req4, _ := MarshalEcho(false, 0x1234, 9, Payload(9, 2000))
	fragNeeded := append([]byte{3, 4, 0, 0, 0, 0, 0x05, 0xdc}, append(v4Header(1, 2028), req4[:8]...)...)
	unreach := append([]byte{3, 1, 0, 0, 0, 0, 0, 0}, append(v4Header(1, 2028), req4[:8]...)...)
	req6, _ := MarshalEcho(true, 0x1234, 10, Payload(10, 2000))
	ip6 := make([]byte, 40)
	ip6[0], ip6[6] = 0x60, 44
	frag6 := []byte{58, 0, 0, 0, 0, 0, 0, 1}
	tooBig6 := append([]byte{2, 0, 0, 0, 0, 0, 0x05, 0x00}, append(append(ip6, frag6...), req6[:8]...)...)
	tests := []struct {
		name string
		b    []byte
		v6   bool
		want Reply
	}{
		{"v4 echo reply", echo4, false, Reply{Kind: KindEchoReply, ID: 0x1234, Seq: 7}},
		{"v6 echo reply", echo6, true, Reply{Kind: KindEchoReply, Type: 129, ID: 0x1234, Seq: 8}},
		{"v4 frag needed", fragNeeded, false, Reply{Kind: KindTooBig, Type: 3, Code: 4, ID: 0x1234, Seq: 9, MTU: 1500}},
		{"v4 unreachable", unreach, false, Reply{Kind: KindUnreachable, Type: 3, Code: 1, ID: 0x1234, Seq: 9}},
		{"v6 packet too big, fragment header", tooBig6, true, Reply{Kind: KindTooBig, Type: 2, ID: 0x1234, Seq: 10, MTU: 1280}},
		{"v4 echo request is other", req4, false, Reply{Kind: KindOther, Type: 8}},
		{"v4 frag needed quoting not-an-echo", append([]byte{3, 4, 0, 0, 0, 0, 5, 0xdc}, v4Header(17, 100)...), false,
			Reply{Kind: KindOther, Type: 3, Code: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseReply(tt.b, tt.v6)
			if err != nil {
				t.Fatal(err)
			}
			got.Payload = nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ParseReply([]byte{0, 0, 0}, false); err == nil {
		t.Error("3-byte message parsed")
	}
}

func TestPayloadMatches(t *testing.T) {
	p := Payload(300, 65507)
	tests := []struct {
		name string
		b    []byte
		seq  int
		want bool
	}{
		{"same", p, 300, true},
		{"other seq", p, 301, false},
		{"short", p[:65506], 300, false},
		{"flipped bit", func() []byte { c := append([]byte(nil), p...); c[40000] ^= 0x80; return c }(), 300, false},
		{"empty", nil, 300, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PayloadMatches(tt.b, tt.seq, 65507); got != tt.want {
				t.Errorf("PayloadMatches = %v, want %v", got, tt.want)
			}
		})
	}
	if !PayloadMatches(nil, 5, 0) {
		t.Error("empty payload of size 0 does not match")
	}
}

func TestTrackerMatch(t *testing.T) {
	target := []byte{198, 18, 0, 2}
	tr := newTracker(0x10001, target) // only the low 16 bits go on the wire
	now := timeAt(0)
	pr := &probe{seq: 5, size: 4, tx: Sent{At: now}, deadline: timeAt(100)}
	tr.add(pr)
	ok := Reply{Kind: KindEchoReply, ID: 1, Seq: 5, Payload: Payload(5, 4)}
	steps := []struct {
		name string
		r    Reply
		from []byte
		at   int
		want Outcome
	}{
		{"other id", Reply{Kind: KindEchoReply, ID: 2, Seq: 5, Payload: Payload(5, 4)}, target, 1, OutcomeForeign},
		{"unknown seq", Reply{Kind: KindEchoReply, ID: 1, Seq: 6, Payload: Payload(6, 4)}, target, 1, OutcomeForeign},
		{"other host", ok, []byte{198, 18, 0, 9}, 1, OutcomeForeign},
		{"corrupt", Reply{Kind: KindEchoReply, ID: 1, Seq: 5, Payload: []byte{1, 2, 3, 4}}, target, 1, OutcomeCorrupt},
		{"reply", ok, target, 50, OutcomeReply},
		{"duplicate", ok, target, 51, OutcomeDuplicate},
	}
	for _, s := range steps {
		if got, _ := tr.match(s.r, s.from, timeAt(s.at)); got != s.want {
			t.Errorf("%s: %v, want %v", s.name, got, s.want)
		}
	}
	late := &probe{seq: 6, size: 0, tx: Sent{At: now}, deadline: timeAt(100)}
	tr.add(late)
	if got, _ := tr.match(Reply{Kind: KindEchoReply, ID: 1, Seq: 6}, target, timeAt(101)); got != OutcomeLate {
		t.Errorf("late reply: %v", got)
	}
	big := &probe{seq: 7, size: 2000, tx: Sent{At: now}, deadline: timeAt(100)}
	tr.add(big)
	if got, p := tr.match(Reply{Kind: KindTooBig, ID: 1, Seq: 7, MTU: 1500}, []byte{10, 0, 0, 1}, timeAt(1)); got != OutcomeTooBig || !p.closed {
		t.Errorf("frag needed from a router: %v", got)
	}
}
