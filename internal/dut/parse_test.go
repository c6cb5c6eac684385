package dut

import (
	"context"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

func lines(s string) []string { return strings.Split(strings.Trim(s, "\n"), "\n") }

// doneAt feeds lines to a fresh Done detector and returns the index of
// the line that ends the report (-1: none).
func doneAt(a *Adapter, role Role, t Test, ls []string) int {
	done := a.Done(role, t)
	for i, l := range ls {
		if done(l) {
			return i
		}
	}
	return -1
}

func ptrF(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func ptrI(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

type want struct {
	bps, jitter, secs  any
	packets, lost, ooo any
}

func check(t *testing.T, d result.Device, w want) {
	t.Helper()
	got := want{ptrF(d.BitsPerSecond), ptrF(d.JitterMS), ptrF(d.Seconds), ptrI(d.Packets), ptrI(d.Lost), ptrI(d.OutOfOrder)}
	if got != w {
		t.Errorf("parsed %+v, want %+v", got, w)
	}
}

// The seeds' own printouts (seed 003: Zephyr 3.6 on an RT1170; seed 000:
// Harmony 3 on a PIC32MZ) parse to the figures printed in them.
func TestParseSeedOutputs(t *testing.T) {
	udp, tcp := Test{Proto: "udp", Duration: 10 * time.Second}, Test{Proto: "tcp", Duration: 10 * time.Second}
	z := lines(`
Duration: 10.45 s
Received packets: 84531
nb packets lost: 0
nb packets outorder: 0
jitter 1.05 ms
rate: 95.07 Mbps`)
	if doneAt(zephyr, RoleServer, udp, z) != len(z)-1 {
		t.Error("zephyr UDP download: end of report not found on the rate line")
	}
	d, err := zephyr.Parse(RoleServer, udp, z)
	if err != nil {
		t.Fatal(err)
	}
	check(t, d, want{95.07e6, 1.05, 10.45, int64(84531), int64(0), int64(0)})

	z = lines(`
Duration: 10.00 s
Packet Size: 1000 bytes
Rate: 10 000 kbps
Num packets: 99,778
Num Packets out of order: 0
Jitter: 198 us
Rate: 79.81 Mbps`)
	if doneAt(zephyr, RoleClient, udp, z) != len(z)-1 {
		t.Error("zephyr UDP upload: the requested-rate line ended the report, or nothing did")
	}
	d, _ = zephyr.Parse(RoleClient, udp, z)
	check(t, d, want{79.81e6, 0.198, 10.0, int64(99778), nil, int64(0)})

	z = lines(`
Duration: 10.00 s
Packet Size: 1000 bytes
Rate: 1000 kbps
Num packets: 92,954
Num Errors: 0
Rate: 74.36 Mbps`)
	d, _ = zephyr.Parse(RoleClient, tcp, z)
	check(t, d, want{74.36e6, nil, 10.0, int64(92954), nil, nil})

	h := lines(`
    - [50- 60 sec]   0/ 71297 ( 0%)    83959 Kbps
    - [0.0- 60.0 sec]   0/ 427655 ( 0%)    83927 Kbps
    -----------------------------------------
    - [0.0- 60.2 sec]   0/ 427664 ( 0%)    83574 Kbps`)
	if i := doneAt(harmony, RoleClient, udp, h); i != len(h)-1 {
		t.Errorf("harmony: report ends at line %d, want the session line after the dashes", i)
	}
	d, _ = harmony.Parse(RoleClient, udp, h)
	check(t, d, want{83574e3, nil, 60.2, int64(427664), int64(0), nil})
}

// Formats not in the seeds, as the firmware sources print them.
func TestParseFirmwareFormats(t *testing.T) {
	udp := Test{Proto: "udp", Duration: 10 * time.Second}
	z := lines("End of session!\n duration:\t\t1.00 m\n received packets:\t5\n nb packets lost:\t2\n nb packets outorder:\t1\n jitter:\t\t\t310 us\n rate:\t\t\t999 Kbps")
	d, _ := zephyr.Parse(RoleServer, udp, z)
	check(t, d, want{999e3, 0.31, 60.0, int64(5), int64(2), int64(1)})

	e := lines("\n[ ID] Interval\t\tTransfer\tBandwidth\n[  0]  0.0- 5.0 sec\t6.00 MBytes\t9.60 Mbits/sec\n[  0]  5.0-10.0 sec\t6.00 MBytes\t9.60 Mbits/sec\n[  0]  0.0-10.0 sec\t12.00 MBytes\t9.60 Mbits/sec")
	if i := doneAt(espIDF, RoleServer, udp, e); i != len(e)-1 {
		t.Errorf("esp-idf: report ends at line %d, want the 0-10 s line", i)
	}
	d, _ = espIDF.Parse(RoleServer, udp, e)
	check(t, d, want{9.6e6, nil, 10.0, nil, nil, nil})
	old := lines("        Interval Bandwidth\n   0-  10 sec       8.24 Mbits/sec")
	d, _ = espIDF.Parse(RoleClient, udp, old)
	check(t, d, want{8.24e6, nil, 10.0, nil, nil, nil})

	l := lines(" IPERF Report:\n   Bytes Transferred 1250000\n   Duration (ms) 1000\n   Bandwidth (kbitpsec) 10000")
	d, _ = lwip.Parse(RoleServer, Test{Proto: "tcp"}, l)
	check(t, d, want{10e6, nil, 1.0, nil, nil, nil})

	for _, a := range adapters {
		if _, err := a.Parse(RoleServer, udp, lines("garbage\n\x00\xff")); err == nil {
			t.Errorf("%s: garbage parsed without error", a.Name)
		}
	}
}

func zephyr27Adapter() *Adapter { a, _ := zephyrFor(2, 7, 6, true); return a }

// The commands each adapter types, for both roles and protocols.
func TestCommands(t *testing.T) {
	tt := Test{Proto: "udp", Port: 5002, Peer: "192.0.2.2", Duration: 10 * time.Second, Length: 1000, RateBPS: 100e6, Iface: "USBLAN"}
	cases := []struct {
		a    *Adapter
		role Role
		t    Test
		want string
	}{
		{zephyr, RoleServer, tt, "zperf udp download 5002"},
		{zephyr, RoleClient, tt, "zperf udp upload 192.0.2.2 5002 10 1000 100000K"},
		{zephyr, RoleClient, Test{Proto: "tcp", Peer: "192.0.2.2"}, "zperf tcp upload 192.0.2.2 5001 10 1024"},
		{espIDF, RoleServer, tt, "iperf -s -u -p 5002 -t 10 -i 10"},
		{espIDF, RoleClient, tt, "iperf -c 192.0.2.2 -u -p 5002 -t 10 -i 10 -l 1000 -b 100"},
		{newESP(true), RoleClient, tt, "iperf -c 192.0.2.2 -u -p 5002 -t 10 -i 10 -l 1000 -b 100000000"},
		{zephyr27Adapter(), RoleClient, tt, "zperf udp upload 192.0.2.2 5002 10 1000 100000000"},
		{harmony, RoleServer, tt, "defnet USBLAN|iperf -s -u -p 5002"},
		{harmony, RoleClient, tt, "defnet USBLAN|iperf -c 192.0.2.2 -u -p 5002 -t 10 -i 10 -l 1000 -b 100M"},
		{lwip, RoleClient, Test{Proto: "tcp", Peer: "192.0.2.2"}, "iperf -c 192.0.2.2"},
	}
	for _, c := range cases {
		cmds, err := c.a.Commands(c.role, c.t)
		if got := strings.Join(cmds, "|"); err != nil || got != c.want {
			t.Errorf("%s %s: %q, %v; want %q", c.a.Name, c.role, got, err, c.want)
		}
	}
	if _, err := lwip.Commands(RoleServer, tt); err == nil || !strings.Contains(err.Error(), "no UDP") {
		t.Errorf("lwip UDP: %v, want a clear refusal", err)
	}
}

func TestParseSpec(t *testing.T) {
	t.Setenv("LG_COORDINATOR", "coord.lab")
	good := map[string]Spec{
		"labgrid:board@10.0.0.5:20409":    {"labgrid", "board@10.0.0.5:20409", 0},
		"labgrid:board":                   {"labgrid", "board@coord.lab:20408", 0},
		"serial:/dev/ttyACM0?baud=921600": {"serial", "/dev/ttyACM0", 921600},
		"serial:COM3":                     {"serial", "COM3", DefaultBaud},
		"telnet:192.0.2.1:2323":           {"telnet", "192.0.2.1:2323", 0},
		"telnet:192.0.2.1":                {"telnet", "192.0.2.1:23", 0},
		"telnet:[2001:db8::1]:23":         {"telnet", "[2001:db8::1]:23", 0},
		"cmd:adb shell":                   {"cmd", "adb shell", 0},
	}
	for in, w := range good {
		if got, err := ParseSpec(in); err != nil || got != w {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", in, got, err, w)
		}
	}
	for _, bad := range []string{"", "serial:", "serial:/dev/x?baud=fast", "serial:/dev/x?parity=e", "telnet::23", "telnet:h:99999", "cmd: ", "ssh:host", "/dev/ttyACM0", "labgrid:", "labgrid:@h", "labgrid:b@h:0"} {
		if _, err := ParseSpec(bad); err == nil || !strings.Contains(err.Error(), "--dut") {
			t.Errorf("ParseSpec(%q) = %v, want a clear error", bad, err)
		}
	}
}

// A telnet server that negotiates, then a Harmony-like shell: the session
// answers the negotiation, strips it, and detects the shell.
func TestTelnetTransport(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	replies := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		// WILL ECHO, WILL SGA, DO TTYPE, a subnegotiation, an escaped 0xFF.
		c.Write([]byte{tIAC, tWILL, optEcho, tIAC, tWILL, optSGA, tIAC, tDO, 24, tIAC, tSB, 24, 1, tIAC, tSE})
		c.Write([]byte("TCP/IP Stack: Initialization Ended - success\r\n\xff\xff>"))
		buf := make([]byte, 256)
		var in []byte
		for !strings.Contains(string(in), "help\r\n") {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			in = append(in, buf[:n]...)
			if strings.Count(string(in), "\r\n") == 1 && !strings.Contains(string(in), "help") {
				c.Write([]byte(">"))
			}
		}
		replies <- in
		c.Write([]byte("help\r\n  defnet: Set default network interface\r\n  iperfk: iperf kill\r\n>"))
		io.Copy(io.Discard, c)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Open(ctx, "telnet:"+ln.Addr().String(), Options{StepTimeout: 3 * time.Second})
	if err != nil {
		t.Fatalf("%v\n%s", err, transcriptOf(s))
	}
	defer s.Close()
	if s.Shell() != "harmony" {
		t.Errorf("shell %q, want harmony", s.Shell())
	}
	in := <-replies
	want := string([]byte{tIAC, tDO, optEcho, tIAC, tDO, optSGA, tIAC, tWONT, 24})
	if !strings.Contains(string(in), want) {
		t.Errorf("negotiation answer % x, want % x in it", in, want)
	}
	data := 0
	for _, e := range s.Transcript() {
		// The escaped IAC IAC is one data byte 0xFF (shown as U+FFFD: not
		// UTF-8); no verb or option byte of the negotiation may appear.
		data += strings.Count(e.Text, "\uFFFD")
		if strings.IndexFunc(e.Text, func(r rune) bool { return r == 0x18 || r == 1 || r == 3 }) >= 0 || strings.Count(e.Text, "\uFFFD") > 1 {
			t.Errorf("negotiation bytes leaked into the transcript: %q", e.Text)
		}
	}
	if data != 1 {
		t.Errorf("%d data bytes 0xFF in the transcript, want the one escaped", data)
	}
}

// cmd: runs a program as the shell; here a shell script that plays a
// Zephyr prompt. A program that exits is a dropped line.
func TestCmdTransport(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on this system")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	script := `printf 'uart:~$ '; while read l; do case "$l" in help*) printf 'help\r\n  zperf  :Zperf commands\r\nuart:~$ ';; quit*) exit 0;; *) printf '\r\nuart:~$ ';; esac; done`
	s, err := Open(ctx, "cmd:"+script, Options{StepTimeout: 3 * time.Second})
	if err != nil {
		t.Fatalf("%v\n%s", err, transcriptOf(s))
	}
	defer s.Close()
	if s.Shell() != "zephyr" {
		t.Fatalf("shell %q, want zephyr", s.Shell())
	}
	if err := s.c.send("quit"); err != nil {
		t.Fatal(err)
	}
	_, err = s.c.wait(ctx, 3*time.Second, "EOF", func(string, bool) (bool, error) { return false, nil })
	if err == nil || !strings.Contains(err.Error(), ErrLineClosed.Error()) {
		t.Errorf("after the program exited: %v, want the line closed", err)
	}
}

// A shell that does not identify itself is refused with a clear error.
func TestAutoUnknown(t *testing.T) {
	a, b := net.Pipe()
	go func() {
		buf := make([]byte, 64)
		for {
			if _, err := b.Read(buf); err != nil {
				return
			}
			b.Write([]byte("ok\r\nfoo> "))
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := New(ctx, a, Options{StepTimeout: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "--dut-shell") {
		t.Errorf("err = %v, want a request to name the shell", err)
	}
	b.Close()
}

// FuzzDeviceOutput: whatever the device prints, the session and every
// adapter's parser and report detector neither crash nor hang.
func FuzzDeviceOutput(f *testing.F) {
	f.Add([]byte("rate: 95.07 Mbps\r\n"), "zephyr")
	f.Add([]byte("    - [0.0- 60.2 sec]   0/ 427664 ( 0%)    83574 Kbps\n"), "harmony")
	f.Add([]byte("[  0]  0.0-10.0 sec\t1.2 MBytes\t1.00 Mbits/sec\n\x1b[1;3"), "esp-idf")
	f.Fuzz(func(t *testing.T, out []byte, name string) {
		a, err := Lookup(name)
		if err != nil {
			a = zephyr
		}
		c := &conn{rw: nopRW{}, changed: make(chan struct{})}
		c.feed(out)
		c.mu.Lock()
		ls := append(append([]string(nil), c.lines...), c.partialLocked())
		c.mu.Unlock()
		for _, role := range []Role{RoleServer, RoleClient} {
			for _, p := range []string{"tcp", "udp"} {
				tt := Test{Proto: p}
				done := a.Done(role, tt)
				for _, l := range ls {
					done(l)
				}
				_, _ = a.Parse(role, tt, ls)
			}
		}
		_ = c.transcript()
	})
}

type nopRW struct{}

func (nopRW) Read([]byte) (int, error)    { return 0, io.EOF }
func (nopRW) Write(p []byte) (int, error) { return len(p), nil }
func (nopRW) Close() error                { return nil }

func transcriptOf(s *Session) string {
	if s == nil {
		return "(no session)"
	}
	return strings.Join(s.TranscriptLines(), "\n")
}

// A slow shell: the prompt pending before a command must not be taken
// for the prompt after it (help would then look empty).
func TestPromptAfterCommand(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	go func() {
		b.Write([]byte("uart:~$ "))
		buf := make([]byte, 64)
		for {
			n, err := b.Read(buf)
			if err != nil {
				return
			}
			if strings.Contains(string(buf[:n]), "help") {
				time.Sleep(300 * time.Millisecond)
				b.Write([]byte("help\r\n  zperf  :Zperf commands\r\n"))
			}
			b.Write([]byte("uart:~$ "))
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := New(ctx, a, Options{StepTimeout: 2 * time.Second})
	if err != nil || s.Shell() != "zephyr" {
		t.Fatalf("%v\n%s", err, transcriptOf(s))
	}
	s.Close()
}

// ReceivedCounts gives what a device's server received and lost, in data
// datagrams: zperf prints the received count, Harmony the total it
// expected (lost included); a firmware without packet and loss counts
// (ESP-IDF) or a client's figures give none.
func TestReceivedCounts(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		d         result.Device
		got, lost int64
		ok        bool
	}{
		{result.Device{Shell: "zephyr", Role: "server", Packets: n(250), Lost: n(3)}, 250, 3, true},
		{result.Device{Shell: "harmony", Role: "server", Packets: n(172), Lost: n(2)}, 170, 2, true},
		{result.Device{Shell: "esp-idf", Role: "server", BitsPerSecond: f64(2e6)}, 0, 0, false},
		{result.Device{Shell: "zephyr", Role: "server", Packets: n(250)}, 0, 0, false},
		{result.Device{Shell: "zephyr", Role: "client", Packets: n(250), Lost: n(0)}, 0, 0, false},
		{result.Device{Shell: "vxworks", Role: "server", Packets: n(250), Lost: n(0)}, 0, 0, false},
	} {
		got, lost, ok := ReceivedCounts(c.d)
		if got != c.got || lost != c.lost || ok != c.ok {
			t.Errorf("%s %s: %d, %d, %v; want %d, %d, %v", c.d.Shell, c.d.Role, got, lost, ok, c.got, c.lost, c.ok)
		}
	}
}

// An iperf-cmd whose help says -b takes bit/s gets bit/s; the example's
// and older iperf-cmd's whole Mbit/s otherwise.
func TestESPBandwidthSyntax(t *testing.T) {
	newer := "iperf  [-suV] [--help] [-c <host>] [-p <port>] [-b <bandwidth>] [--abort]\n  -b, --bandwidth=<bandwidth>  #[kmgKMG]  bandwidth to send at in bits/sec"
	older := "iperf  [-suV] [-c <host>] [-p <port>] [-b <bandwidth>] [--abort]\n  -b, --bandwidth=<bandwidth>  bandwidth to send at in Mbits/sec"
	if !espBits.MatchString(newer) || espBits.MatchString(older) {
		t.Errorf("bit/s syntax: newer %v, older %v", espBits.MatchString(newer), espBits.MatchString(older))
	}
}
