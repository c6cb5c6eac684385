package dut

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// render feeds raw device output to a session's line reader in chunks of
// size n (0: all at once) and returns the complete lines, the pending line
// and the transcript.
func render(raw []byte, n int) ([]string, string, []Entry) {
	c := &conn{rw: nopRW{}, changed: make(chan struct{})}
	if n == 0 {
		n = len(raw)
	}
	for len(raw) > 0 {
		k := min(n, len(raw))
		c.feed(raw[:k])
		raw = raw[k:]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...), c.partialLocked(), append([]Entry(nil), c.trans...)
}

// The lines a terminal shows for the raw bytes of a Zephyr 3.4 UART
// (issue 20, testdata/zephyr-3.4-uart.raw: ESC, CR and tabs as the board
// sent them): colours gone, the prompt erased and redrawn around the
// asynchronous TCP server report gone, the report lines whole.
var zephyr34Screen = []string{
	"uart:~$ zperf tcp upload 198.18.2.1 40283 3 1024",
	"Remote port is 40283",
	"Invalid IPv6 address 198.18.2.1",
	"Connecting to 198.18.2.1",
	"Duration:\t3.00 s",
	"Packet size:\t1024 bytes",
	"Rate:\t\t10 kbps",
	"Starting...",
	"-",
	"Upload completed!",
	"Duration:\t3.00 s",
	"Num packets:\t30",
	"Num errors:\t0 (retry or fail)",
	"Rate:\t\t80 Kbps",
	"uart:~$ zperf tcp download 5001",
	"[00:00:06.730,000] <inf> net_zperf: Binding to 198.18.2.2",
	"[00:00:06.730,000] <inf> net_zperf: Listening on port 5001",
	"TCP server started on port 5001",
	"New TCP session started.",
	"TCP session ended",
	" Duration:\t\t3.22 s",
	" rate:\t\t\t11.58 Mbps",
	"uart:~$ zperf tcp download stop",
	"TCP server stopped",
}

func TestZephyr34UARTGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/zephyr-3.4-uart.raw")
	if err != nil {
		t.Fatal(err)
	}
	// Whole, and one byte at a time: escape sequences and prompt redraws
	// split across reads render the same.
	for _, chunk := range []int{0, 1, 7} {
		got, pending, trans := render(raw, chunk)
		if strings.Join(got, "\n") != strings.Join(zephyr34Screen, "\n") || pending != "" {
			t.Fatalf("chunks of %d: screen lines\n%q\npending %q; want\n%q", chunk, got, pending, zephyr34Screen)
		}
		// The transcript keeps the raw bytes of a line the terminal
		// rewrote, in caret notation.
		var rawRate string
		for _, e := range trans {
			if e.Text == " rate:\t\t\t11.58 Mbps" {
				rawRate = e.Raw
			}
		}
		if want := "^[[1;32muart:~$ ^[[m^[[8D^[[J rate:\t\t\t^[[1;32muart:~$ ^[[m^[[8D^[[J11.58 Mbps^[[1;32muart:~$ ^[[m^[[8D^[[J^M"; rawRate != want {
			t.Errorf("raw of the rate line %q, want %q", rawRate, want)
		}
	}

	a, _ := zephyrFor(3, 4, 0, true)
	upload, download := zephyr34Screen[1:14], zephyr34Screen[15:22]
	s := &Session{a: a}
	if err := s.check(zephyr34Screen); err != nil {
		t.Errorf("the IPv6 note or a log line was taken for a failure: %v", err)
	}
	tcp := Test{Proto: "tcp", Duration: 3 * time.Second}
	if i := doneAt(a, RoleClient, tcp, upload); i != len(upload)-1 {
		t.Errorf("upload report ends at line %d, want the last", i)
	}
	d, err := a.Parse(RoleClient, tcp, upload)
	if err != nil {
		t.Fatal(err)
	}
	check(t, d, want{80e3, nil, 3.0, int64(30), nil, nil})
	if i := doneAt(a, RoleServer, tcp, download); i != len(download)-1 {
		t.Errorf("download report ends at line %d, want the rate line", i)
	}
	d, err = a.Parse(RoleServer, tcp, download)
	if err != nil {
		t.Fatal(err)
	}
	check(t, d, want{11.58e6, nil, 3.22, nil, nil, nil})
	if strings.Contains(d.Raw, "net_zperf") {
		t.Errorf("a log line in the parsed report: %q", d.Raw)
	}
}

// The terminal model's moves, one at a time.
func TestScreen(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"abc\rX\n", "Xbc"},                    // CR returns, text overwrites
		{"abcdef\x1b[3D\x1b[J\n", "abc"},       // left 3, erase to end
		{"abcdef\x1b[3D\x1b[K\n", "abc"},       // erase to end of line
		{"ab\x1b[5Cc\n", "ab     c"},           // right past the end pads
		{"abc\x1b[2Kxy\n", "   xy"},            // whole line erased, cursor stays
		{"ab\bc\n", "ac"},                      // backspace
		{"\x1b[1;31mred\x1b[0m\n", "red"},      // SGR dropped
		{"a\x1b[?25lb\x1b(Bc\x1b=d\n", "abcd"}, // other sequences dropped
		{"abc\x1b[10D\x1b[Jx\n", "x"},          // left stops at column 0
		{"héllo\n", "héllo"},
	} {
		for _, n := range []int{0, 1} {
			got, _, _ := render([]byte(c.in), n)
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("%q in chunks of %d: %q, want %q", c.in, n, got, c.want)
			}
		}
	}
}

// A wait that runs out or is stopped says so in words, and errors.Is still
// finds the context's error.
func TestCtxEndedWords(t *testing.T) {
	c := &conn{rw: nopRW{}, changed: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := c.wait(ctx, 0, "the device's report", func(string, bool) (bool, error) { return false, nil })
	if err == nil || strings.Contains(err.Error(), "context") || !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = c.wait(ctx, 0, "the device's report", func(string, bool) (bool, error) { return false, nil })
	if err == nil || err.Error() != "waiting for the device's report: the run was stopped" || !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: %v", err)
	}
}

// The 2.x sample's UDP server prints its reordering as "nb packets lost"
// and its loss as "nb packets outorder", with 1024-based rates; the other
// syntaxes print them as named.
func TestZephyr27ServerReport(t *testing.T) {
	report := lines("End of session!\n duration:\t\t1.00 s\n received packets:\t248\n nb packets lost:\t1\n nb packets outorder:\t2\n jitter:\t\t\t310 us\n rate:\t\t\t1.95 Mbps")
	udp := Test{Proto: "udp"}
	a27, _ := zephyrFor(2, 7, 6, true)
	d, err := a27.Parse(RoleServer, udp, report)
	if err != nil {
		t.Fatal(err)
	}
	check(t, d, want{1.95 * 1024 * 1024, 0.31, 1.0, int64(248), int64(2), int64(1)})
	a34, _ := zephyrFor(3, 4, 0, true)
	d, _ = a34.Parse(RoleServer, udp, report)
	check(t, d, want{1.95e6, 0.31, 1.0, int64(248), int64(1), int64(2)})
}
