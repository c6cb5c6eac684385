package iperf3

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCookie(t *testing.T) {
	c, err := NewCookie(bytes.NewReader(bytes.Repeat([]byte{0, 31, 32, 255}, 9)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.String(), strings.Repeat("a7", 18); got != want { // 0, 31, 32&31, 255&31
		t.Fatalf("cookie %q, want %q", got, want)
	}
	w := c.AppendWire(nil)
	if len(w) != CookieSize || w[36] != 0 {
		t.Fatalf("wire form %q", w)
	}
	back, err := ParseCookie(w)
	if err != nil || back != c {
		t.Fatalf("ParseCookie = %v, %v", back, err)
	}
	random, err := NewCookie(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseCookie(random.AppendWire(nil)); err != nil {
		t.Fatalf("random cookie rejected: %v", err)
	}
	bad := map[string][]byte{
		"short":     w[:36],
		"no nul":    append(append([]byte{}, w[:36]...), 'a'),
		"bad char":  append([]byte("A"), w[1:]...),
		"digit one": append([]byte("1"), w[1:]...),
	}
	for name, b := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseCookie(b); !errors.Is(err, ErrBadCookie) {
				t.Fatalf("got %v, want ErrBadCookie", err)
			}
		})
	}
	if !LooksLikeCookie(w[:10]) || !LooksLikeCookie(w) || LooksLikeCookie([]byte{0, 0, 0, 0}) {
		t.Fatal("LooksLikeCookie wrong")
	}
}

func TestStateString(t *testing.T) {
	tests := []struct {
		s    State
		want string
		b    byte
	}{
		{TestStart, "TEST_START", 1},
		{IperfDone, "IPERF_DONE", 16},
		{AccessDenied, "ACCESS_DENIED", 0xff},
		{ServerError, "SERVER_ERROR", 0xfe},
		{State(42), "STATE(42)", 42},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if tt.s.String() != tt.want || tt.s.Byte() != tt.b {
				t.Fatalf("%d: %q %#x", tt.s, tt.s.String(), tt.s.Byte())
			}
		})
	}
}

var happyPath = []struct {
	from Role
	s    State
}{
	{RoleServer, ParamExchange}, {RoleServer, CreateStreams}, {RoleServer, TestStart},
	{RoleServer, TestRunning}, {RoleClient, TestEnd}, {RoleServer, ExchangeResults},
	{RoleServer, DisplayResults}, {RoleClient, IperfDone},
}

func TestMachineHappyPath(t *testing.T) {
	for _, role := range []Role{RoleClient, RoleServer} {
		t.Run(role.String(), func(t *testing.T) {
			m := NewMachine(role)
			for _, st := range happyPath {
				var err error
				if st.from == role {
					err = m.Send(st.s)
				} else {
					err = m.Recv(st.s)
				}
				if err != nil {
					t.Fatalf("%v: %v", st.s, err)
				}
			}
			if !m.Done() || m.State() != IperfDone {
				t.Fatalf("not done: %v", m.State())
			}
			if err := m.Recv(TestStart); !errors.Is(err, ErrFinished) && role == RoleClient {
				t.Fatalf("after done: %v", err)
			}
		})
	}
}

func TestMachineRejects(t *testing.T) {
	tests := []struct {
		name  string
		steps []State // server-side view; senders from stateSender
		bad   State
		from  Role
		want  error
	}{
		{"unknown byte", nil, State(8 + 100), RoleClient, ErrUnknownState},
		{"unknown negative", nil, State(-3), RoleServer, ErrUnknownState},
		{"skip params", nil, CreateStreams, RoleServer, ErrUnexpectedState},
		{"test end early", []State{ParamExchange}, TestEnd, RoleClient, ErrUnexpectedState},
		{"wrong sender", []State{ParamExchange, CreateStreams, TestStart, TestRunning}, TestEnd, RoleServer, ErrUnexpectedState},
		{"unused state", []State{ParamExchange}, ResultRequest, RoleServer, ErrUnexpectedState},
		{"denied late", []State{ParamExchange, CreateStreams, TestStart}, AccessDenied, RoleServer, ErrUnexpectedState},
		{"after error", []State{ServerError}, ParamExchange, RoleServer, ErrFinished},
		{"after terminate", []State{ParamExchange, ClientTerminate}, CreateStreams, RoleServer, ErrFinished},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMachine(RoleServer)
			for _, s := range tt.steps {
				if err := m.Step(stateSender(s), s); err != nil {
					t.Fatalf("setup %v: %v", s, err)
				}
			}
			before := m.State()
			err := m.Step(tt.from, tt.bad)
			var te *TransitionError
			if !errors.Is(err, tt.want) || !errors.As(err, &te) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if m.State() != before {
				t.Fatal("state changed on error")
			}
		})
	}
	m := NewMachine(RoleServer)
	if err := m.Recv(TestStart); err != nil || m.State() != 0 {
		t.Fatalf("client TEST_START must be a tolerated no-op: %v", err)
	}
	for _, s := range []State{ServerError, ServerTerminate} {
		m := NewMachine(RoleClient)
		_ = m.Recv(ParamExchange)
		if err := m.Recv(s); err != nil || !m.Done() {
			t.Fatalf("%v: %v", s, err)
		}
	}
}

func TestJSONFrame(t *testing.T) {
	frame := func(n uint32, body string) []byte {
		b := binary.BigEndian.AppendUint32(nil, n)
		return append(b, body...)
	}
	tests := []struct {
		name string
		in   []byte
		want string
		err  error
	}{
		{"ok", frame(9, `{"a":[1]}`), `{"a":[1]}`, nil},
		{"too large", frame(MaxJSONLen+1, ""), "", ErrJSONTooLarge},
		{"huge", frame(0xffffffff, ""), "", ErrJSONTooLarge},
		{"invalid", frame(3, `{"a`), "", ErrInvalidJSON},
		{"short body", frame(10, `{}`), "", io.ErrUnexpectedEOF},
		{"short length", []byte{0, 0}, "", io.ErrUnexpectedEOF},
		{"empty", nil, "", io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadJSONFrame(bytes.NewReader(tt.in), 0)
			if !errors.Is(err, tt.err) || string(got) != tt.want {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
	out, err := AppendJSONFrame(nil, []byte(`{}`))
	if err != nil || !bytes.Equal(out, frame(2, `{}`)) {
		t.Fatalf("AppendJSONFrame = %x, %v", out, err)
	}
}

func TestConnCancel(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := NewConn(a)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.ReadJSON(ctx)
		done <- err
	}()
	if _, err := b.Write([]byte{0, 0}); err != nil { // half a length prefix, then silence
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	// A fresh context works again: the interrupt deadline was cleared.
	go func() { _, _ = b.Write([]byte{TestStart.Byte()}) }()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if s, err := c.ReadState(ctx2); err != nil || s != TestStart {
		t.Fatalf("ReadState = %v, %v", s, err)
	}
}

func TestConnRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	c := NewConn(&buf)
	ctx := context.Background()
	ck, _ := NewCookie(nil)
	p := &Params{Protocol: ProtoUDP, Time: 2, Parallel: 1, Len: 200, Bandwidth: 1e6, ClientVersion: "3.12"}
	r := &Results{SenderHasRetransmits: -1, Streams: []StreamResult{{ID: 1, Bytes: 5, Retransmits: -1}}}
	steps := []error{
		c.WriteCookie(ctx, ck), c.WriteState(ctx, ParamExchange), c.WriteParams(ctx, p),
		c.WriteResults(ctx, r), c.WriteServerErr(ctx, &ServerErr{IErrno: ErrnoTotalRate, Errno: 0}),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if got, err := c.ReadCookie(ctx); err != nil || got != ck {
		t.Fatalf("cookie %v %v", got, err)
	}
	if s, err := c.ReadState(ctx); err != nil || s != ParamExchange {
		t.Fatalf("state %v %v", s, err)
	}
	gp, err := c.ReadParams(ctx)
	if err != nil || !cmp.Equal(gp, p) {
		t.Fatalf("params %v: %s", err, cmp.Diff(p, gp))
	}
	gr, err := c.ReadResults(ctx)
	if err != nil || !cmp.Equal(gr, r) {
		t.Fatalf("results %v: %s", err, cmp.Diff(r, gr))
	}
	if s, _ := c.ReadState(ctx); s != ServerError {
		t.Fatalf("want SERVER_ERROR, got %v", s)
	}
	se, err := c.ReadServerErr(ctx)
	if err != nil || se.IErrno != ErrnoTotalRate || !strings.Contains(se.Error(), "larger than server limit") {
		t.Fatalf("server error %v %v", se, err)
	}
}

func TestServerErrBody(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want ServerErr
		ok   bool
	}{
		{"full", []byte{0, 0, 0, 37, 0, 0, 0, 4}, ServerErr{IErrno: ErrnoMaxDuration, Errno: 4}, true},
		{"auth path, i_errno only", []byte{0, 0, 0, 142}, ServerErr{IErrno: ErrnoAuthTest}, true},
		{"negative", []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, ServerErr{IErrno: -1}, true},
		{"truncated", []byte{0, 0}, ServerErr{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readServerErrBody(bytes.NewReader(tt.in))
			if (err == nil) != tt.ok || (tt.ok && *got != tt.want) {
				t.Fatalf("got %+v, %v", got, err)
			}
		})
	}
	wire := (&ServerErr{IErrno: ErrnoAccessDenied, Errno: 11}).AppendWire(nil)
	if !bytes.Equal(wire, []byte{0xfe, 0, 0, 0, 121, 0, 0, 0, 11}) {
		t.Fatalf("wire %x", wire)
	}
	if Errno(9999).String() != "int_errno=9999" {
		t.Fatal(Errno(9999).String())
	}
}

func TestParamsEncodePresence(t *testing.T) {
	p := &Params{Protocol: ProtoUDP, Time: 1, Parallel: 1, Len: 200, Bandwidth: 1000000, PacingTimer: 1000, ClientVersion: "3.12"}
	got, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	// The 3.12 example of wire-protocols.md §4.2, byte for byte.
	want := `{"udp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"len":200,"bandwidth":1000000,"pacing_timer":1000,"client_version":"3.12"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	for _, k := range []string{`"reverse"`, `"tcp"`, `false`, `"wb_`} {
		if strings.Contains(string(got), k) {
			t.Fatalf("%s must not be sent: %s", k, got)
		}
	}
	p.Reverse, p.UDPCounters64Bit, p.GetServerOutput = true, true, true
	p.WB = &WBParams{Version: WBVersion, IntervalMs: 1000, Duplicates: true}
	got, _ = p.MarshalJSON()
	for _, k := range []string{`"reverse":true`, `"udp_counters_64bit":1`, `"get_server_output":1`, `"wb_version":1`, `"wb_interval_ms":1000`, `"wb_dups":true`} {
		if !strings.Contains(string(got), k) {
			t.Fatalf("missing %s: %s", k, got)
		}
	}
	if strings.Contains(string(got), "wb_latency") {
		t.Fatalf("unset extension key sent: %s", got)
	}
}

func TestDecodeParams(t *testing.T) {
	aff := int64(2)
	tests := []struct {
		name string
		in   string
		want Params
		err  bool
	}{
		{"3.12 udp", `{"udp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"len":200,"bandwidth":1000000,"pacing_timer":1000,"client_version":"3.12"}`,
			Params{Protocol: ProtoUDP, Time: 1, Parallel: 1, Len: 200, Bandwidth: 1000000, PacingTimer: 1000, ClientVersion: "3.12"}, false},
		{"presence not value", `{"tcp":true,"reverse":false,"udp_counters_64bit":0,"nodelay":null}`,
			Params{Protocol: ProtoTCP, Reverse: true, UDPCounters64Bit: true, NoDelay: true}, false},
		{"no protocol", `{"parallel":2}`, Params{Parallel: 2}, false},
		{"float syntax", `{"bandwidth":1e+10,"num":1.5}`, Params{Bandwidth: 1e10, Num: 1}, false},
		{"3.21 keys + unknown", `{"tcp":true,"gso":1,"gso_dg_size":1400,"gro":0,"skip_rx_copy":1,"mptcp":true,"server_affinity":2,"future_key":{"x":[1]}}`,
			Params{Protocol: ProtoTCP, GSO: true, GSODgSize: 1400, SkipRxCopy: true, MPTCP: true, ServerAffinity: &aff}, false},
		{"extension", `{"tcp":true,"wb_version":1,"wb_agent":"wirebench/0","wb_latency":true}`,
			Params{Protocol: ProtoTCP, WB: &WBParams{Version: 1, Agent: "wirebench/0", Latency: true}}, false},
		{"string number", `{"time":"10"}`, Params{}, true},
		{"bad title", `{"title":5}`, Params{}, true},
		{"not object", `[1]`, Params{}, true},
		{"null", `null`, Params{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeParams([]byte(tt.in))
			if tt.err {
				if !errors.Is(err, ErrBadParams) {
					t.Fatalf("got %v, want ErrBadParams", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(&tt.want, got); d != "" {
				t.Fatal(d)
			}
		})
	}
}

func TestParamsValidate(t *testing.T) {
	tests := []struct {
		name string
		p    Params
		want Errno
	}{
		{"ok", Params{Protocol: ProtoTCP, Time: 10, Parallel: 128}, 0},
		{"streams", Params{Parallel: 129}, ErrnoNumStreams},
		{"duration", Params{Time: 86401}, ErrnoDuration},
		{"reverse+bidir", Params{Reverse: true, Bidirectional: true}, ErrnoReverseBidir},
		{"udp len", Params{Protocol: ProtoUDP, Len: 15}, ErrnoUDPBlockSize},
		{"tcp len", Params{Len: MaxBlockSize + 1}, ErrnoBlockSize},
		{"sctp", Params{Protocol: ProtoSCTP}, ErrnoProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			var se *ServerErr
			if tt.want == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.As(err, &se) || se.IErrno != tt.want || !errors.Is(err, ErrBadParams) {
				t.Fatalf("got %v, want i_errno %d", err, tt.want)
			}
		})
	}
}

func TestDecodeResults(t *testing.T) {
	const head = `"cpu_util_total":1.5,"cpu_util_user":0.5,"cpu_util_system":1,`
	tests := []struct {
		name string
		in   string
		want *Results
	}{
		{"3.12 wrap-around",
			`{` + head + `"sender_has_retransmits":18446744073709551615,"streams":[{"id":1,"bytes":1048576,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.000041}]}`,
			&Results{CPUUtilTotal: 1.5, CPUUtilUser: 0.5, CPUUtilSystem: 1, SenderHasRetransmits: -1,
				Streams: []StreamResult{{ID: 1, Bytes: 1048576, Retransmits: -1, EndTime: 1.000041}}}},
		{"3.14 omitted pair, server output",
			`{` + head + `"sender_has_retransmits":0,"server_output_text":"hello\n","streams":[{"id":3,"bytes":5,"retransmits":-1,"jitter":1.5e-05,"errors":2,"omitted_errors":0,"packets":10,"omitted_packets":1}],"unknown":true}`,
			&Results{CPUUtilTotal: 1.5, CPUUtilUser: 0.5, CPUUtilSystem: 1, ServerOutputText: "hello\n",
				Streams: []StreamResult{{ID: 3, Bytes: 5, Retransmits: -1, Jitter: 1.5e-05, Errors: 2, Packets: 10, Omitted: &OmittedCounts{Packets: 1}}}}},
		{"big float bytes",
			`{` + head + `"sender_has_retransmits":1,"server_output_json":{"start":{}},"streams":[{"id":1,"bytes":1.2345678901234568e+17,"retransmits":0,"jitter":0,"errors":0,"packets":0}]}`,
			&Results{CPUUtilTotal: 1.5, CPUUtilUser: 0.5, CPUUtilSystem: 1, SenderHasRetransmits: 1, ServerOutputJSON: json.RawMessage(`{"start":{}}`),
				Streams: []StreamResult{{ID: 1, Bytes: 123456789012345680}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeResults([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Fatal(d)
			}
			again, err := got.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			back, err := DecodeResults(again)
			if err != nil || !cmp.Equal(back, got) {
				t.Fatalf("round trip: %v %s", err, cmp.Diff(got, back))
			}
		})
	}
	bad := map[string]string{
		"missing cpu":      `{"cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":0,"streams":[]}`,
		"missing streams":  `{` + head + `"sender_has_retransmits":0}`,
		"string number":    `{` + head + `"sender_has_retransmits":"0","streams":[]}`,
		"half omitted":     `{` + head + `"sender_has_retransmits":0,"streams":[{"id":1,"bytes":1,"retransmits":0,"jitter":0,"errors":0,"packets":0,"omitted_errors":0}]}`,
		"missing packets":  `{` + head + `"sender_has_retransmits":0,"streams":[{"id":1,"bytes":1,"retransmits":0,"jitter":0,"errors":0}]}`,
		"too big":          `{` + head + `"sender_has_retransmits":1e30,"streams":[]}`,
		"streams not list": `{` + head + `"sender_has_retransmits":0,"streams":{}}`,
	}
	for name, in := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeResults([]byte(in)); !errors.Is(err, ErrBadResults) {
				t.Fatalf("got %v, want ErrBadResults", err)
			}
		})
	}
}

func TestResultsEncodeExtension(t *testing.T) {
	r := &Results{SenderHasRetransmits: 0, Streams: []StreamResult{}, WB: &WBResults{Version: 1, Streams: []WBStream{{ID: 1, Duplicates: 2,
		Intervals: []WBInterval{{Start: 0, End: 1, Bytes: 10, Packets: 1}}, Latency: &WBLatency{Count: 1, MinUs: 3}}}}}
	b, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"streams":[]`) || !strings.Contains(string(b), `"wb_streams":[{"id":1,"dups":2`) {
		t.Fatalf("%s", b)
	}
	back, err := DecodeResults(b)
	if err != nil || !cmp.Equal(back, r) {
		t.Fatalf("%v %s", err, cmp.Diff(r, back))
	}
}

func TestUDP(t *testing.T) {
	kinds := map[string]UDPReplyKind{
		"6789": UDPReplyCurrent, "\xb1\x68\xde\x3a": UDPReplyLegacy, "9876": UDPReplyReversed,
		"\x3a\xde\x68\xb1": UDPReplyLegacyBE, "abcd": UDPReplyInvalid, "678": UDPReplyInvalid,
	}
	for in, want := range kinds {
		t.Run(want.String()+"/"+in, func(t *testing.T) {
			if got := ClassifyUDPReply([]byte(in)); got != want {
				t.Fatalf("got %v", got)
			}
		})
	}
	if !IsUDPConnectMsg([]byte("9876")) || !IsUDPConnectMsg([]byte{0x15, 0xcd, 0x5b, 0x07}) || IsUDPConnectMsg([]byte("abcd")) {
		t.Fatal("IsUDPConnectMsg")
	}
	tests := []struct {
		c64  bool
		h    UDPHeader
		wire []byte
	}{
		{false, UDPHeader{Sec: 1, Usec: 2, Seq: 3}, []byte{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3}},
		{true, UDPHeader{Sec: 1, Usec: 2, Seq: 1 << 40}, []byte{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 1, 0, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		b := make([]byte, 20)
		n, err := tt.h.Put(b, tt.c64)
		if err != nil || !bytes.Equal(b[:n], tt.wire) {
			t.Fatalf("Put %x %v", b[:n], err)
		}
		got, err := DecodeUDPHeader(tt.wire, tt.c64)
		if err != nil || got != tt.h {
			t.Fatalf("Decode %+v %v", got, err)
		}
		if _, err := DecodeUDPHeader(tt.wire[:n-1], tt.c64); err == nil {
			t.Fatal("short datagram accepted")
		}
	}
}

func TestParseInt64(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-1", -1, true}, {"18446744073709551615", -1, true},
		{"9223372036854775808", -9223372036854775808, true}, {"1e3", 1000, true},
		{"-2.9", -2, true}, {"18446744073709551616", 0, false}, {`"1"`, 0, false},
		{"true", 0, false}, {"null", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseInt64([]byte(tt.in))
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("got %d, %v", got, err)
			}
		})
	}
}

// TestServerErrText: a SERVER_ERROR with a reason carries it after the 9
// bytes iperf3 reads, as one JSON frame; our reader returns it in Text,
// over a buffer and over a TCP connection, and a reader that stops after
// the 9 bytes (as iperf3 does) gets the plain error. A peer that closes
// after the 9 bytes (iperf3 itself) gives an empty Text (the time the read
// took is logged: end of file, not the wait bound).
func TestServerErrText(t *testing.T) {
	why := "reverse and connect-back traffic refused: 198.18.0.1 is in this server's --deny-reverse 198.18.0.1/32"
	se := &ServerErr{IErrno: ErrnoAuthTest, Text: why}
	wire := se.AppendWire(nil)
	if !bytes.Equal(wire[:9], []byte{0xfe, 0, 0, 0, 142, 0, 0, 0, 0}) {
		t.Fatalf("first 9 bytes %x: not what iperf3 reads", wire[:9])
	}
	if got, err := readServerErrBody(bytes.NewReader(wire[1:9])); err != nil || got.IErrno != ErrnoAuthTest || got.Text != "" {
		t.Fatalf("the 8 bytes iperf3 reads: %+v %v", got, err)
	}
	ctx := context.Background()
	c := NewConn(bytes.NewBuffer(wire[1:]))
	got, err := c.ReadServerErr(ctx)
	if err != nil || got.Text != why || !strings.Contains(got.Error(), why) || !strings.Contains(got.Error(), "i_errno 142") {
		t.Fatalf("buffer: %+v, %v", got, err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, tc := range []struct {
		name string
		send []byte
		want string
	}{{"wirebench server", wire, why}, {"iperf3 server", (&ServerErr{IErrno: ErrnoAuthTest}).AppendWire(nil), ""}} {
		go func() {
			s, err := ln.Accept()
			if err != nil {
				return
			}
			s.Write(tc.send)
			s.Close()
		}()
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c := NewConn(nc)
		start := time.Now()
		if st, err := c.ReadState(ctx); err != nil || st != ServerError {
			t.Fatalf("%s: state %v %v", tc.name, st, err)
		}
		got, err := c.ReadServerErr(ctx)
		took := time.Since(start)
		nc.Close()
		t.Logf("%s: %v (read in %v)", tc.name, got, took)
		if err != nil || got.IErrno != ErrnoAuthTest || got.Text != tc.want {
			t.Errorf("%s: %+v, %v; want text %q", tc.name, got, err, tc.want)
		}
	}
}

// TestWBProbeRoundTrip: wb_probe marks a probe's test on the wire and
// decodes back; a test without it carries no key.
func TestWBProbeRoundTrip(t *testing.T) {
	for _, probe := range []bool{true, false} {
		p := &Params{Protocol: ProtoTCP, Num: 1024, Len: 1024, Parallel: 1, WB: &WBParams{Version: WBVersion, Agent: "wirebench/0", Probe: probe}}
		b, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), `"wb_probe":true`); got != probe {
			t.Errorf("probe %v: %s", probe, b)
		}
		back, err := DecodeParams(b)
		if err != nil {
			t.Fatal(err)
		}
		if back.WB == nil || back.WB.Probe != probe {
			t.Errorf("probe %v: decoded %+v", probe, back.WB)
		}
	}
}
