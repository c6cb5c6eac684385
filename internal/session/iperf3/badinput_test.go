package iperf3

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wirebench/wirebench/internal/session"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// TestIperf3ServerBadInput feeds the server's control channel what no
// iperf3 client sends, and clients that vanish in each state. Every case
// must end with a clean error (a log line, or SERVER_ERROR / ACCESS_DENIED
// on the wire), and the server must hold nothing afterwards: goleak checks
// that no goroutine is left once the server stopped.
func TestIperf3ServerBadInput(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ts := startI3Server(t, session.ServerConfig{HeaderTimeout: 500 * time.Millisecond}, Config{})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ts.i3port))
	validParams := []byte(`{"tcp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"len":1000}`)
	frame := func(body []byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		return append(b, body...)
	}
	cookie := func() []byte {
		ck, err := i3wire.NewCookie(nil)
		if err != nil {
			t.Fatal(err)
		}
		return ck.AppendWire(nil)
	}
	cases := []struct {
		name string
		// script writes to the server and reads what it must; it returns
		// the state bytes the server sent.
		send [][]byte
		// want is the last state the server must send (0: nothing checked
		// beyond a clean close).
		want i3wire.State
		// errno, when want is SERVER_ERROR.
		errno i3wire.Errno
	}{
		{name: "wrong cookie", send: [][]byte{[]byte("abcdefghijklmnopqrstuvwxyz234567abc!\x00")}},
		{name: "cookie without NUL", send: [][]byte{[]byte(strings.Repeat("a", 37))}},
		{name: "vanish after cookie", send: [][]byte{cookie()}, want: i3wire.ParamExchange},
		{name: "vanish mid length", send: [][]byte{cookie(), {0, 0}}, want: i3wire.ParamExchange},
		{name: "json length over 1 MiB", send: [][]byte{cookie(), binary.BigEndian.AppendUint32(nil, 1<<20+1)},
			want: i3wire.ServerError, errno: i3wire.ErrnoRecvParams},
		{name: "invalid json", send: [][]byte{cookie(), frame([]byte(`{"tcp":tru`))}, want: i3wire.ServerError, errno: i3wire.ErrnoRecvParams},
		{name: "json not an object", send: [][]byte{cookie(), frame([]byte(`[1,2]`))}, want: i3wire.ServerError, errno: i3wire.ErrnoRecvParams},
		{name: "too many streams", send: [][]byte{cookie(), frame([]byte(`{"tcp":true,"time":1,"parallel":129}`))},
			want: i3wire.ServerError, errno: i3wire.ErrnoNumStreams},
		{name: "above max duration", send: [][]byte{cookie(), frame([]byte(`{"tcp":true,"time":7200,"parallel":1}`))},
			want: i3wire.ServerError, errno: i3wire.ErrnoMaxDuration},
		{name: "vanish in CREATE_STREAMS", send: [][]byte{cookie(), frame(validParams)}, want: i3wire.CreateStreams},
		{name: "unknown state byte in CREATE_STREAMS", send: [][]byte{cookie(), frame(validParams), {0x63}}, want: i3wire.CreateStreams},
		{name: "CLIENT_TERMINATE in CREATE_STREAMS", send: [][]byte{cookie(), frame(validParams), {byte(i3wire.ClientTerminate)}},
			want: i3wire.CreateStreams},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(guard))
			for _, b := range tc.send {
				if _, err := c.Write(b); err != nil {
					t.Fatalf("write: %v", err)
				}
				time.Sleep(20 * time.Millisecond) // separate segments, as iperf3 sends them
			}
			if tc.want == 0 {
				// The server closes without a word.
				b, err := io.ReadAll(c)
				if err != nil || len(b) != 0 {
					t.Fatalf("server sent %x (%v), want a plain close", b, err)
				}
				return
			}
			if cw, ok := c.(*net.TCPConn); ok && tc.want != i3wire.ServerError {
				_ = cw.CloseWrite() // the client vanishes (half-close: we still read)
			}
			got, err := io.ReadAll(c)
			if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
				t.Fatalf("reading: %v", err)
			}
			var states []i3wire.State
			for i := 0; i < len(got); i++ {
				st := i3wire.State(int8(got[i]))
				states = append(states, st)
				if st == i3wire.ServerError {
					se, err := i3wire.DecodeServerErrBody(got[i+1:])
					if err != nil {
						t.Fatalf("SERVER_ERROR body: %v", err)
					}
					if se.IErrno != tc.errno {
						t.Errorf("i_errno %v, want %v", se.IErrno, tc.errno)
					}
					break
				}
			}
			if len(states) == 0 || states[len(states)-1] != tc.want {
				t.Errorf("server sent states %v, want the last to be %v", states, tc.want)
			}
		})
	}
	// A data stream whose cookie names a test that is not creating streams
	// gets ACCESS_DENIED — here: a test still waiting for its parameters.
	t.Run("stream cookie of a test in PARAM_EXCHANGE", func(t *testing.T) {
		ctrl, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer ctrl.Close()
		ck := cookie()
		_, _ = ctrl.Write(ck)
		one := make([]byte, 1)
		if _, err := io.ReadFull(ctrl, one); err != nil || i3wire.State(int8(one[0])) != i3wire.ParamExchange {
			t.Fatalf("got %x %v", one, err)
		}
		data, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer data.Close()
		_ = data.SetDeadline(time.Now().Add(guard))
		_, _ = data.Write(ck)
		b, _ := io.ReadAll(data)
		if len(b) != 1 || i3wire.State(int8(b[0])) != i3wire.AccessDenied {
			t.Errorf("data stream got %x, want ACCESS_DENIED", b)
		}
	})
	// --max-tests reached: the next control connection gets ACCESS_DENIED.
	t.Run("busy at max tests", func(t *testing.T) {
		busy := startI3Server(t, session.ServerConfig{MaxTests: 1}, Config{})
		a := net.JoinHostPort("127.0.0.1", strconv.Itoa(busy.i3port))
		first, err := net.DialTimeout("tcp", a, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer first.Close()
		_, _ = first.Write(cookie())
		one := make([]byte, 1)
		if _, err := io.ReadFull(first, one); err != nil {
			t.Fatal(err)
		}
		second, err := net.DialTimeout("tcp", a, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer second.Close()
		_ = second.SetDeadline(time.Now().Add(guard))
		_, _ = second.Write(cookie())
		b, _ := io.ReadAll(second)
		if len(b) != 1 || i3wire.State(int8(b[0])) != i3wire.AccessDenied {
			t.Errorf("second client got %x, want ACCESS_DENIED", b)
		}
		first.Close()
		busy.stop()
	})
	// A client that vanishes while the test runs, and one that sends an
	// unknown state byte then.
	for _, how := range []string{"vanish", "unknown state"} {
		t.Run(how+" while running", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			conn := i3wire.NewConn(c)
			ck, _ := i3wire.NewCookie(nil)
			_ = conn.WriteCookie(ctx, ck)
			if st, err := conn.ReadState(ctx); err != nil || st != i3wire.ParamExchange {
				t.Fatalf("%v %v", st, err)
			}
			_ = conn.WriteJSON(ctx, validParams)
			if st, err := conn.ReadState(ctx); err != nil || st != i3wire.CreateStreams {
				t.Fatalf("%v %v", st, err)
			}
			d, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			_ = i3wire.NewConn(d).WriteCookie(ctx, ck)
			for _, want := range []i3wire.State{i3wire.TestStart, i3wire.TestRunning} {
				if st, err := conn.ReadState(ctx); err != nil || st != want {
					t.Fatalf("%v %v, want %v", st, err, want)
				}
			}
			_, _ = d.Write(make([]byte, 4096))
			before := ts.count()
			if how == "vanish" {
				c.Close()
				d.Close()
			} else {
				_, _ = c.Write([]byte{0x63})
			}
			r := ts.waitResults(before + 1)[before]
			if r.Error == "" {
				t.Errorf("the result of a broken test has no error: %+v", r)
			}
		})
	}
	ts.stop()
}
