package session

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// Regression tests for the two crashes of issue 15: bytes from the wire
// that made the server panic.

// TestCrashReverseAndFullDuplexTCP: a 2.1 header asking for both reverse
// and full duplex left handleTCP without a receive flow and indexed it
// (index out of range). It now runs full duplex, says so in a warning, and
// counts both directions exactly.
func TestCrashReverseAndFullDuplexTCP(t *testing.T) {
	done := leakCheck(t)
	ts := startServer(t, robustConfig())
	h := iperf2.NewClientHeader(false, 1, 5001)
	h.Flags |= iperf2.FlagVersion2
	h.UpperFlags |= iperf2.UpperReverse | iperf2.UpperFullDuplex
	h.Amount = iperf2.AmountForDuration(300 * time.Millisecond)
	data := append(h.AppendTo(nil), make([]byte, 50_000)...)
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	send(t, c, data)
	// Our side ends at once; the server sends for its 300 ms, then
	// closes: everything it sent is read to EOF.
	c.(*net.TCPConn).CloseWrite()
	_ = c.SetReadDeadline(time.Now().Add(guard))
	got, _ := io.Copy(io.Discard, c)
	r := ts.resultFrom(c.LocalAddr().String())
	if r.Test.Mode != "full-duplex" || r.Test.Direction != result.DirBidir {
		t.Errorf("mode %q direction %q, want full-duplex bidir", r.Test.Mode, r.Test.Direction)
	}
	if !hasWarning(r, "both reverse") {
		t.Errorf("no warning about the two modes: %q", r.Warnings)
	}
	if rv := receiverOf(t, r); rv.Bytes != int64(len(data)) {
		t.Errorf("the server counted %d bytes received, the client sent %d", rv.Bytes, len(data))
	}
	if r.Sender == nil || r.Sender.Bytes != got || got == 0 {
		t.Errorf("the server counted %+v sent, the client read %d bytes", r.Sender, got)
	}
	normalTCPTest(t, ts)
	done(ts)
}

// TestCrashShortHeaderLength: the LEN field of a header's flags announces
// 0..255 bytes; 1..3 made readTCPHeader allocate a negative length
// (makeslice: len out of range). Every length below the 24-byte v1 header
// is now refused before anything is allocated, with a log line, and the
// stream is counted as data, every byte of it.
func TestCrashShortHeaderLength(t *testing.T) {
	done := leakCheck(t)
	ts := startServer(t, robustConfig())
	for _, n := range []uint32{1, 2, 3, 4, 23} {
		flags := iperf2.FlagExtend | iperf2.FlagLenBit | n<<1
		data := binary.BigEndian.AppendUint32(nil, flags)
		data = append(data, make([]byte, 10_000)...)
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		send(t, c, data)
		c.(*net.TCPConn).CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(guard))
		back, _ := io.Copy(io.Discard, c)
		c.Close()
		line := ts.waitLog(c.LocalAddr().String())
		if !strings.Contains(line, "-byte test header, outside") {
			t.Errorf("length %d: log %q", n, line)
		}
		r := ts.resultFrom(c.LocalAddr().String())
		if rv := receiverOf(t, r); rv.Bytes != int64(len(data)) || back != 0 {
			t.Errorf("length %d: %d bytes sent, the server counted %d and sent %d back", n, len(data), rv.Bytes, back)
		}
	}
	normalTCPTest(t, ts)
	done(ts)
}
