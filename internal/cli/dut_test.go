package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/testutil/standin"
)

// telnetZephyr is a Zephyr-like shell on a loopback telnet port that
// answers "zperf udp download PORT" with a zperf stand-in server and
// prints the stand-in's counts in zperf's format. It sends what it counted
// on got.
func telnetZephyr(t *testing.T, ctx context.Context) (string, chan standin.UDPServerResult) {
	addr, got, _ := telnetZephyrBoth(t, ctx)
	return addr, got
}

// telnetZephyrBoth is telnetZephyr, also answering "zperf udp upload" with
// the zperf stand-in client (its result on the second channel).
func telnetZephyrBoth(t *testing.T, ctx context.Context) (string, chan standin.UDPServerResult, chan standin.UDPClientResult) {
	return telnetZephyrFake(t, ctx, fakeZephyr{})
}

// fakeZephyr says how the fake Zephyr shell misbehaves.
type fakeZephyr struct {
	// failAfter, when set, is asked after every session the stand-in
	// server counted: once it says so, the shell fails as fail says at the
	// next "zperf udp download PORT".
	failAfter func(standin.UDPServerResult) bool
	// fail is how: "silent" (the default: it reads on and answers
	// nothing, not even the echo), "garbage" (it answers noise, never a
	// prompt), "reset" (it prints its boot banner and a prompt) or "drop"
	// (it closes the line).
	fail string
	// mute: the zperf server sends no report back to our client (it
	// prints its figures on the shell only).
	mute bool
}

// telnetZephyrFake is the fake Zephyr shell on telnet, serving any number
// of tests through one session (each result is sent on its channel, in
// order), misbehaving as fz says.
func telnetZephyrFake(t *testing.T, ctx context.Context, fz fakeZephyr) (string, chan standin.UDPServerResult, chan standin.UDPClientResult) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan standin.UDPServerResult, 64)
	gotc := make(chan standin.UDPClientResult, 64)
	var failing atomic.Bool
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(60 * time.Second))
		c.Write([]byte{255, 251, 1}) // WILL ECHO
		prompt := func() { c.Write([]byte("uart:~$ ")) }
		prompt()
		rd := bufio.NewReader(c)
		silent := false
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.Trim(line, "\r\n\xff\xfd\x01")
			f := strings.Fields(line)
			if len(f) == 4 && f[2] == "download" && f[3] != "stop" && failing.Load() {
				switch fz.fail {
				case "garbage":
					c.Write([]byte(line + "\r\n\x00#@!~ 3%^&\r\n\x7f\x01qwzx\r\n"))
					continue
				case "reset":
					c.Write([]byte(line + "\r\n*** Booting Zephyr OS build v3.6.0 ***\r\n"))
					prompt()
					continue
				case "drop":
					return
				}
				silent = true
			}
			if silent {
				continue
			}
			c.Write([]byte(line + "\r\n"))
			switch {
			case len(f) == 4 && f[0] == "zperf" && f[2] == "download" && f[3] != "stop":
				srv, err := standin.ZperfNewUDPServer(ctx, "127.0.0.1:"+f[3], standin.UDPServerOptions{Mute: fz.mute})
				if err != nil {
					c.Write([]byte("Failed to start UDP server!\r\n"))
					prompt()
					continue
				}
				c.Write([]byte("UDP server started on port " + f[3] + "\r\n"))
				prompt()
				go func() {
					res, err := srv.Wait()
					if err != nil {
						return
					}
					kbps := float64(res.Bytes) * 8 / res.Duration.Seconds() / 1000
					fmt.Fprintf(c, "New session started.\r\nEnd of session!\r\n duration:\t\t%.2f s\r\n received packets:\t%d\r\n nb packets lost:\t%d\r\n nb packets outorder:\t%d\r\n jitter:\t\t\t%d us\r\n rate:\t\t\t%d Kbps\r\n",
						res.Duration.Seconds(), res.Counted, res.Lost, res.OutOfOrder, res.JitterUS, int64(kbps))
					if fz.failAfter != nil && fz.failAfter(res) {
						failing.Store(true)
					}
					got <- res
				}()
			case len(f) == 8 && f[0] == "zperf" && f[1] == "udp" && f[2] == "upload":
				secs, _ := strconv.Atoi(f[5])
				size, _ := strconv.Atoi(f[6])
				kbit, _ := strconv.Atoi(strings.TrimSuffix(f[7], "K"))
				res, err := standin.ZperfNewUDPClient(ctx, net.JoinHostPort(f[3], f[4]), standin.UDPClientOptions{
					Duration: time.Duration(secs) * time.Second, Length: size, RateBps: float64(kbit) * 1e3})
				if err != nil || res.Report == nil {
					c.Write([]byte("UDP upload failed\r\n"))
					prompt()
					continue
				}
				rp := res.Report
				us := float64(rp.StopSec) + float64(rp.StopUsec)/1e6
				fmt.Fprintf(c, "-\r\nUpload completed!\r\nStatistics:\t\tserver\t(client)\r\nDuration:\t\t%.2f s\t(%d s)\r\nNum packets:\t\t%d\t(%d)\r\nNum packets out order:\t%d\r\nNum packets lost:\t%d\r\nJitter:\t\t\t%d us\r\nRate:\t\t\t%d Kbps\t(%d Kbps)\r\n",
					us, secs, rp.Datagrams, res.DataPackets, rp.OutOrderCnt, rp.ErrorCnt, rp.Jitter2, int64(float64(rp.TotalLen())*8/us/1000), kbit)
				prompt()
				gotc <- res
			case len(f) > 0 && f[0] == "help":
				c.Write([]byte("Available commands:\r\n  net    :Networking commands\r\n  zperf  :Zperf commands\r\n"))
				prompt()
			case len(f) > 0 && f[0] == "zperf":
				c.Write([]byte("UDP server stopped\r\n"))
				prompt()
			default:
				prompt()
			}
		}
	}()
	return ln.Addr().String(), got, gotc
}

// `wirebench client --dut` drives the device's shell over telnet, runs the
// UDP test through the zperf stand-in and puts the device's own figures in
// the JSON, equal to what the stand-in counted.
func TestClientDUTJSON(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	addr, got := telnetZephyr(t, ctx)
	port := freeLoopbackPort(t)
	var out, errb bytes.Buffer
	code := run(ctx, []string{"client", "127.0.0.1", "-u", "-b", "2M", "-l", "1000", "-t", "1", "-p", fmt.Sprint(port),
		"--dut", "telnet:" + addr, "--dut-shell", "zephyr", "--json"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
	var r result.Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	var res standin.UDPServerResult
	select {
	case res = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the stand-in counted nothing")
	}
	d := r.Device
	if d == nil || d.Shell != "zephyr" || d.Role != "server" || d.Packets == nil || *d.Packets != res.Counted ||
		d.Lost == nil || *d.Lost != int64(res.Lost) || d.JitterMS == nil || math.Abs(*d.JitterMS-float64(res.JitterUS)/1e3) > 1e-9 || len(d.Transcript) == 0 {
		t.Fatalf("device %+v, stand-in counted %d packets, %d lost, %d µs jitter", d, res.Counted, res.Lost, res.JitterUS)
	}
	if !strings.Contains(out.String(), `"device"`) || strings.Contains(out.String(), "null") {
		t.Errorf("JSON: %s", out.String())
	}
}

// The text output puts the device's line, ours and the difference
// together.
func TestClientDUTText(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	addr, _ := telnetZephyr(t, ctx)
	port := freeLoopbackPort(t)
	var out, errb bytes.Buffer
	code := run(ctx, []string{"client", "127.0.0.1", "-u", "-b", "2M", "-t", "1", "-p", fmt.Sprint(port), "--dut", "telnet:" + addr}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
	for _, want := range []string{"[dut] zephyr    (server) reported ", "[dut] wirebench  (sender) ", "[dut] difference device − wirebench: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
}

// A device that never answers: a clear error within --dut-timeout, exit
// 1, and our own result printed all the same.
func TestClientDUTSilent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			time.Sleep(10 * time.Second)
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The device's server is running (its shell is not answering).
	sink, err := standin.TCPSink(ctx, "127.0.0.1:0", standin.TCPServerOptions{Idle: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	port := sink.Addr().(*net.TCPAddr).Port
	var out, errb bytes.Buffer
	start := time.Now()
	tr := filepath.Join(t.TempDir(), "dut.txt")
	code := run(ctx, []string{"client", "127.0.0.1", "-p", fmt.Sprint(port), "-t", "1", "--dut", "telnet:" + ln.Addr().String(), "--dut-timeout", "1",
		"--dut-transcript", tr, "--json"}, &out, &errb)
	if b, err := os.ReadFile(tr); err != nil || !strings.Contains(string(b), " > \n") {
		t.Errorf("transcript file %q, %v: want the empty line we sent", b, err)
	}
	if el := time.Since(start); el > 8*time.Second {
		t.Errorf("took %v", el)
	}
	if code != exitFailure || !strings.Contains(errb.String(), "no answer from the device") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	var r result.Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Device == nil || r.Device.Error == "" || r.Sender == nil || r.Sender.Bytes == 0 {
		t.Fatalf("%v: want our result with the device error: %s", err, out.String())
	}
}

func TestDUTUsage(t *testing.T) {
	for _, args := range [][]string{
		{"client", "127.0.0.1", "-R", "--dut", "cmd:true"},
		{"client", "127.0.0.1", "-n", "1M", "--dut", "cmd:true"},
		{"client", "127.0.0.1", "--dut", "usb:x"},
		{"client", "127.0.0.1", "--dut", "cmd:true", "--dut-shell", "vxworks"},
		// The iperf3 dialect only for a zperf built for iperf3, and even
		// then one plain test.
		{"client", "127.0.0.1", "--dialect", "iperf3", "--dut", "cmd:true"},
		{"client", "127.0.0.1", "--dialect", "iperf3", "-R", "--dut", "cmd:true", "--dut-shell", "zephyr-iperf3"},
		{"server", "--dut", "serial:/dev/null"},
		{"server", "--dut", "cmd:true", "--dut-rate", "fast", "--dut-peer", "127.0.0.1"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "dut") {
			t.Errorf("%q: exit %d, %q; want a usage error about --dut", args, code, errb.String())
		}
	}
}

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	u, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	return u.LocalAddr().(*net.UDPAddr).Port
}

// `wirebench server --dut` tells the device to be the client, answers its
// one test and prints both sides: the device's packets are those of the
// report our server sent it, as the stand-in parsed it.
func TestServerDUT(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	addr, _, got := telnetZephyrBoth(t, ctx)
	var out, errb bytes.Buffer
	code := run(ctx, []string{"server", "-u", "-p", "0", "-B", "127.0.0.1", "--iperf3-port", "0", "--dut", "telnet:" + addr, "--dut-peer", "127.0.0.1",
		"--dut-time", "1", "--dut-rate", "2M", "--dut-len", "1000", "--json"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
	var res standin.UDPClientResult
	select {
	case res = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the stand-in client did not run")
	}
	var r result.Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	d := r.Device
	if d == nil || d.Role != "client" || d.Packets == nil || *d.Packets != int64(res.Report.Datagrams) || r.Receiver == nil || r.Receiver.Packets == 0 {
		t.Fatalf("device %+v receiver %+v; stand-in report %+v", d, r.Receiver, res.Report)
	}
}

// `wirebench matrix --dut` runs both UDP cells unattended through one
// session with the board's shell: the download cell has the device's
// client send to a server of ours, the upload cell our client send to the
// device's server; each cell carries the device's own figures, equal to
// what the stand-in behind the fake shell counted.
func TestMatrixDUT(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr, gotServer, gotClient := telnetZephyrBoth(t, ctx)
	port := freeLoopbackPort(t)
	db := filepath.Join(t.TempDir(), "runs.db")
	var out, errb bytes.Buffer
	code := run(ctx, []string{"matrix", "127.0.0.1", "-p", fmt.Sprint(port), "--proto", "udp", "-t", "1", "-b", "2M", "-l", "1000",
		"--dut", "telnet:" + addr, "--dut-shell", "zephyr", "--dut-peer", "127.0.0.1", "--json", "--db", db}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
	var m result.Matrix
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	var srv standin.UDPServerResult
	var cli standin.UDPClientResult
	for i := 0; i < 2; i++ {
		select {
		case srv = <-gotServer:
		case cli = <-gotClient:
		case <-time.After(5 * time.Second):
			t.Fatal("the stand-ins behind the fake shell did not both run")
		}
	}
	if len(m.Cells) != 2 {
		t.Fatalf("cells %+v", m.Cells)
	}
	for _, c := range m.Cells {
		if c.Status != matrix.StatusOK || c.Device == nil || c.Device.Packets == nil || c.BitsPerSecond == nil {
			t.Fatalf("%s: %+v (device %+v)", c.Name(), c, c.Device)
		}
		switch c.Direction {
		case result.MatrixUpload:
			if c.Method != "device server" || c.Device.Role != "server" || *c.Device.Packets != srv.Counted {
				t.Errorf("upload cell: method %q, device %+v; the stand-in server counted %d", c.Method, c.Device, srv.Counted)
			}
		case result.MatrixDownload:
			if c.Method != "device client" || c.Device.Role != "client" || *c.Device.Packets != int64(cli.Report.Datagrams) {
				t.Errorf("download cell: method %q, device %+v; the stand-in client's report %+v", c.Method, c.Device, cli.Report)
			}
			if c.Result == nil || c.Result.Receiver == nil || c.Result.Receiver.Packets == 0 {
				t.Errorf("download cell: our server counted nothing: %+v", c.Result)
			}
		}
	}
	// The store keeps every cell's session; show --transcript prints each
	// distinct one once.
	code, shown, errOut := cliRun("show", "1", "--db", db, "--transcript")
	distinct := map[string]bool{}
	for _, c := range m.Cells {
		tr := strings.Join(c.Device.Transcript, "\n")
		distinct[tr] = true
		if len(c.Device.Transcript) == 0 || !strings.Contains(shown, tr+"\n") {
			t.Errorf("%s: its %d-line transcript is not in show --transcript", c.Name(), len(c.Device.Transcript))
		}
	}
	if code != exitOK || strings.Count(shown, "# run 1.") != len(distinct) {
		t.Errorf("show --transcript: exit %d, %s; %d headers for %d distinct transcripts:\n%s", code, errOut, strings.Count(shown, "# run 1."), len(distinct), shown)
	}
}
