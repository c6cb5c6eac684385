package labgrid

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// scriptedServer reads exactly len(want) bytes from c and reports them.
func readN(t *testing.T, c net.Conn, n int) []byte {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Errorf("server read %d bytes: %v (got %q)", n, err, b)
	}
	return b
}

var offers = []byte{IAC, WILL, OptBinary, IAC, DO, OptBinary, IAC, WILL, OptSGA, IAC, DO, OptSGA, IAC, WILL, OptComPort}

// TestRFC2217Negotiation: our offers, the answers to the server's (echo
// taken, terminal type refused, our own offers not answered twice), the
// 8N1 settings and the baud rate with its IAC doubled inside the
// sub-negotiation, the acknowledged rate, and console data with IAC IAC
// read as one 0xFF that arrived with the acknowledgement.
func TestRFC2217Negotiation(t *testing.T) {
	for _, tc := range []struct {
		name string
		baud int
		val  []byte // the baud as sent, IAC doubled
	}{
		{"115200", 115200, []byte{0, 1, 0xC2, 0}},
		{"rate with 0xFF bytes", 0x00FF00FF, []byte{0, IAC, IAC, 0, IAC, IAC}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cli, srv := net.Pipe()
			defer cli.Close()
			defer srv.Close()
			done := make(chan []byte, 1)
			go func() {
				got := readN(t, srv, len(offers))
				_, _ = srv.Write([]byte{IAC, DO, OptBinary, IAC, WILL, OptBinary, IAC, WILL, OptSGA, IAC, DO, OptSGA,
					IAC, WILL, OptEcho, IAC, DO, 24, IAC, DO, OptComPort})
				want := []byte{IAC, DO, OptEcho, IAC, WONT, 24}
				want = append(want, IAC, SB, OptComPort, CPSetBaudRate)
				want = append(want, tc.val...)
				want = append(want, IAC, SE, IAC, SB, OptComPort, CPSetDataSize, 8, IAC, SE,
					IAC, SB, OptComPort, CPSetParity, 1, IAC, SE, IAC, SB, OptComPort, CPSetStopSize, 1, IAC, SE)
				got = append(got, readN(t, srv, len(want))...)
				ack := append([]byte{IAC, SB, OptComPort, CPSetBaudRate + ServerOffset}, tc.val...)
				ack = append(ack, IAC, SE)
				_, _ = srv.Write(append(ack, []byte("uart:~$ \xff\xff!\r\n")...))
				done <- got
				want = append(append([]byte{}, offers...), want...)
				if !bytes.Equal(got, want) {
					t.Errorf("client sent\n%v\nwant\n%v", got, want)
				}
			}()
			conn, err := NewRFC2217(context.Background(), cli, tc.baud, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			<-done
			if conn.Baud() != tc.baud {
				t.Errorf("baud %d, want %d", conn.Baud(), tc.baud)
			}
			buf := make([]byte, 64)
			n, err := conn.Read(buf)
			if err != nil || string(buf[:n]) != "uart:~$ \xff!\r\n" {
				t.Errorf("read %q, %v; want the prompt with one 0xFF", buf[:n], err)
			}
			// Our data goes out with 0xFF doubled (binary mode: CR as is).
			go func() { _, _ = conn.Write([]byte("a\xffb\r\n")) }()
			if got := readN(t, srv, 6); string(got) != "a\xff\xffb\r\n" {
				t.Errorf("server got %q, want 0xFF doubled", got)
			}
		})
	}
}

// A server that sets another speed than asked is an error naming both.
func TestRFC2217BaudMismatch(t *testing.T) {
	cli, srv := net.Pipe()
	defer cli.Close()
	defer srv.Close()
	go func() {
		readN(t, srv, len(offers))
		_, _ = srv.Write([]byte{IAC, DO, OptComPort})
		readN(t, srv, 10+3*7)
		_, _ = srv.Write([]byte{IAC, SB, OptComPort, CPSetBaudRate + ServerOffset, 0, 0, 0x25, 0x80, IAC, SE})
	}()
	_, err := NewRFC2217(context.Background(), cli, 115200, 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "9600") || !strings.Contains(err.Error(), "115200") {
		t.Fatalf("err %v; want one naming 9600 and 115200", err)
	}
}

// A server that refuses COM-PORT-OPTION leaves the speed as it is: no
// error, no rate.
func TestRFC2217ComPortRefused(t *testing.T) {
	cli, srv := net.Pipe()
	defer cli.Close()
	defer srv.Close()
	go func() {
		readN(t, srv, len(offers))
		_, _ = srv.Write([]byte{IAC, DONT, OptComPort, 'x'})
	}()
	conn, err := NewRFC2217(context.Background(), cli, 115200, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if conn.Baud() != 0 {
		t.Errorf("baud %d after a refusal", conn.Baud())
	}
	b := make([]byte, 8)
	if n, err := conn.Read(b); err != nil || string(b[:n]) != "x" {
		t.Errorf("read %q, %v; want the byte after the refusal", b[:n], err)
	}
}

// A server that never answers (a raw TCP port) is an error that says so;
// so is a cancelled context.
func TestRFC2217Silent(t *testing.T) {
	cli, srv := net.Pipe()
	defer cli.Close()
	defer srv.Close()
	go func() { _, _ = io.Copy(io.Discard, srv) }()
	_, err := NewRFC2217(context.Background(), cli, 115200, 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "raw TCP") {
		t.Fatalf("err %v; want one suggesting a raw port", err)
	}
	cli2, srv2 := net.Pipe()
	defer cli2.Close()
	defer srv2.Close()
	go func() { _, _ = io.Copy(io.Discard, srv2) }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewRFC2217(ctx, cli2, 115200, time.Hour); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Fatalf("err %v; want the cancellation", err)
	}
}

// The parser keeps its state across reads: a command split anywhere,
// IAC IAC as data, CR NUL as CR while the server is not in binary mode.
func TestRFC2217ParseSplit(t *testing.T) {
	stream := []byte{'a', IAC, WILL, OptEcho, 'b', IAC, IAC, 'c', IAC, SB, OptComPort, CPSetBaudRate + ServerOffset, 0, 0, 0x25, 0x80, IAC, SE, '\r', 0, 'd', IAC, NOPByte}
	for size := 1; size <= len(stream); size++ {
		tc := &RFC2217{local: map[byte]bool{}, remote: map[byte]bool{}}
		var data, replies []byte
		for i := 0; i < len(stream); i += size {
			chunk := append([]byte{}, stream[i:min(i+size, len(stream))]...)
			n, r := tc.parseLocked(chunk)
			data = append(data, chunk[:n]...)
			replies = append(replies, r...)
		}
		if string(data) != "ab\xffc\rd" {
			t.Errorf("chunks of %d: data %q", size, data)
		}
		if !bytes.Equal(replies, []byte{IAC, DO, OptEcho}) || tc.Baud() != 9600 {
			t.Errorf("chunks of %d: replies %v, baud %d", size, replies, tc.Baud())
		}
	}
}

// NOPByte is telnet's NOP command.
const NOPByte = 241

func TestEscapeAndCRNul(t *testing.T) {
	if got := Escape([]byte{1, IAC, 2, IAC, IAC}); !bytes.Equal(got, []byte{1, IAC, IAC, 2, IAC, IAC, IAC, IAC}) {
		t.Errorf("Escape: %v", got)
	}
	if got := crNul([]byte("a\rb\r\nc\r")); string(got) != "a\r\x00b\r\nc\r\x00" {
		t.Errorf("crNul: %q", got)
	}
	if got := crNul([]byte("a\r\n")); string(got) != "a\r\n" {
		t.Errorf("crNul: %q", got)
	}
}
