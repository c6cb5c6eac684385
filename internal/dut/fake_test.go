//go:build linux || darwin

package dut

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/wirebench/wirebench/internal/testutil/standin"
	"github.com/wirebench/wirebench/internal/testutil/zshell"
	"golang.org/x/sys/unix"
)

// This file is over 600 lines on purpose: it holds the four fake firmware
// shells side by side, each one screen, so their formats can be compared.
//
// A fake board: a shell on the master side of a pty pair that answers in
// one firmware's real output format (zperf_shell.c, ESP-IDF iperf, Harmony
// iperf.c, an lwiperf shell) and runs the traffic through the stand-in
// peers of internal/testutil/standin, on loopback only. The session under
// test opens the pty's slave as a serial port.

// counted is what the stand-in behind a fake board counted in one test,
// before the firmware's formatting: the test compares the parsed report
// with it.
type counted struct {
	bytes               int64
	dur                 time.Duration
	packets, lost, ooo  int64
	hasPackets, hasLoss bool
	jitterUS            int64
	hasJitter           bool
	printedKbps         int64 // the rate as the firmware computed it, kbit/s
}

type board struct {
	t     *testing.T
	fw    string // zephyr, esp-idf, harmony, lwip
	mode  string // "", "silent", "garbage", "reset", "drop"
	ctx   context.Context
	ptm   *os.File
	wmu   sync.Mutex
	got   chan counted
	lwipT time.Duration // the fake lwiperf client's fixed duration (real lwiperf: 10 s)
}

// startBoard opens a pty pair, runs the fake shell on its master and
// returns the serial spec of its slave.
func startBoard(t *testing.T, ctx context.Context, fw, mode string) (*board, string) {
	t.Helper()
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skipf("no pty on this system: %v", err)
	}
	// pty.Open leaves the master in blocking mode (it calls Fd), where
	// Close cannot interrupt the fake's pending read and the line never
	// drops: use a non-blocking duplicate the runtime can poll.
	fd, err := unix.Dup(int(ptm.Fd()))
	ptm.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	ptm = os.NewFile(uintptr(fd), "ptmx")
	b := &board{t: t, fw: fw, mode: mode, ctx: ctx, ptm: ptm, got: make(chan counted, 4), lwipT: time.Second}
	name := pts.Name()
	t.Cleanup(func() { ptm.Close(); pts.Close() })
	go b.run()
	return b, "serial:" + name + "?baud=115200"
}

func (b *board) print(s string) {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	_, _ = b.ptm.Write([]byte(strings.ReplaceAll(s, "\n", "\r\n")))
}

func (b *board) prompt() {
	switch b.fw {
	case "zephyr":
		b.print("\x1b[1;32muart:~$ \x1b[m")
	case "esp-idf":
		b.print("iperf> ")
	case "harmony":
		b.print(">")
	case "lwip":
		b.print("lwip> ")
	}
}

func (b *board) banner() string {
	switch b.fw {
	case "zephyr":
		return "*** Booting Zephyr OS build v3.6.0 ***\n"
	case "esp-idf":
		return "ESP-ROM:esp32s3-20210327\nrst:0x1 (POWERON),boot:0x8 (SPI_FAST_FLASH_BOOT)\n"
	case "harmony":
		return "TCP/IP Stack: Initialization Started\nTCP/IP Stack: Initialization Ended - success\n"
	default:
		return "lwIP 2.1.3 init done\n"
	}
}

func (b *board) run() {
	if b.mode == "silent" {
		_, _ = io.Copy(io.Discard, b.ptm)
		return
	}
	// Nothing is printed before the session's first line: until the
	// session opens the slave as a serial port (raw), the pty echoes what
	// the board prints back to it.
	rd := bufio.NewReader(b.ptm)
	if _, err := rd.ReadString('\n'); err != nil {
		return
	}
	b.print(b.banner())
	b.prompt()
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		b.print(line + "\n") // the shell echoes what is typed
		f := strings.Fields(line)
		if len(f) == 0 {
			b.prompt()
			continue
		}
		if f[0] == "help" {
			b.help()
			b.prompt()
			continue
		}
		if b.mode == "garbage" {
			b.print("\x00\xff#@!~ 3%%^&\n\x7f\x01qwzx\n")
			continue
		}
		switch b.fw {
		case "zephyr":
			b.zephyr(f)
		case "esp-idf":
			b.esp(f)
		case "harmony":
			b.harmony(f)
		case "lwip":
			b.lwip(f)
		}
	}
}

func (b *board) help() {
	switch b.fw {
	case "zephyr":
		b.print("Please press the <Tab> button to see all available commands.\nAvailable commands:\n  clear     :Clear screen.\n  kernel    :Kernel commands\n  net       :Networking commands\n  zperf     :Zperf commands\n")
	case "esp-idf":
		b.print("help \n  Print the list of registered commands\n\niperf  [-suV] [-c <host>] [-p <port>] [-l <length>] [-i <interval>] [-t <time>] [-b <bandwidth>] [--abort]\n  iperf command\n")
	case "harmony":
		b.print("------- Supported command groups ------\n*** tcpip: stack commands ***\n  defnet: Set default network interface\n  iperf: iperf\n  iperfk: iperf kill\n")
	case "lwip":
		b.print("Commands:\n  iperf -s [-p PORT] | -c HOST [-p PORT]   lwiperf TCP server / client\n  ifconfig\n")
	}
}

// disturb applies a failure mode while a test runs: a reset prints the
// boot banner, a drop closes the line.
func (b *board) disturb() bool {
	switch b.mode {
	case "reset":
		time.Sleep(300 * time.Millisecond)
		b.print(b.banner())
		b.prompt()
		return true
	case "drop":
		time.Sleep(300 * time.Millisecond)
		b.ptm.Close()
		return true
	}
	return false
}

func flag(f []string, name string) (string, bool) {
	for i, s := range f {
		if s == name {
			if i+1 < len(f) && !strings.HasPrefix(f[i+1], "-") {
				return f[i+1], true
			}
			return "", true
		}
	}
	return "", false
}

func atoi(s string) int { n, _ := strconv.Atoi(strings.TrimSuffix(s, "K")); return n }

func zTime(us int64) string {
	return zshell.Number(uint64(us), []uint64{60e6, 1e6, 1e3, 0}, []string{"m", "s", "ms", "us"})
}
func zKbps(k int64) string {
	return zshell.Number(uint64(k), []uint64{1000, 0}, []string{"Mbps", "Kbps"})
}

func kbps(bytes int64, d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(float64(bytes) * 8 / d.Seconds() / 1000)
}

func (b *board) addr(port string) string { return "127.0.0.1:" + port }

func (b *board) zephyr(f []string) {
	// zperf udp|tcp download PORT [stop] / upload HOST PORT SECS SIZE [RATE]
	if len(f) < 3 || f[0] != "zperf" {
		b.print(f[0] + ": command not found\n")
		b.prompt()
		return
	}
	proto, verb := f[1], f[2]
	switch {
	case verb == "download" && len(f) > 3 && f[3] == "stop":
		b.print(strings.ToUpper(proto) + " server stopped\n")
		b.prompt()
	case verb == "download":
		port := "5001"
		if len(f) > 3 {
			port = f[3]
		}
		go b.zephyrServer(proto, port)
	case verb == "upload" && len(f) >= 7:
		b.zephyrUpload(proto, f[3], f[4], time.Duration(atoi(f[5]))*time.Second, atoi(f[6]), f[7:])
		b.prompt()
	default:
		b.print("Not enough parameters.\n")
		b.prompt()
	}
}

func (b *board) zephyrServer(proto, port string) {
	ctx := b.ctx
	if proto == "udp" {
		srv, err := standin.ZperfNewUDPServer(ctx, b.addr(port), standin.UDPServerOptions{})
		if err != nil {
			b.print("Failed to start UDP server!\n")
			b.prompt()
			return
		}
		b.print("UDP server started on port " + port + "\n")
		b.prompt()
		if b.disturb() {
			return
		}
		res, err := srv.Wait()
		if err != nil || !res.Completed {
			b.print("UDP session error.\n")
			return
		}
		c := counted{bytes: int64(res.Bytes), dur: res.Duration, packets: res.Counted, lost: int64(res.Lost), ooo: int64(res.OutOfOrder),
			hasPackets: true, hasLoss: true, jitterUS: res.JitterUS, hasJitter: true}
		c.printedKbps = kbps(c.bytes, c.dur)
		b.print("New session started.\nEnd of session!\n")
		b.print(fmt.Sprintf(" duration:\t\t%s\n received packets:\t%d\n nb packets lost:\t%d\n nb packets outorder:\t%d\n jitter:\t\t\t%s\n rate:\t\t\t%s\n",
			zTime(res.Duration.Microseconds()), c.packets, c.lost, c.ooo, zTime(c.jitterUS), zKbps(c.printedKbps)))
		b.got <- c
		return
	}
	srv, err := standin.TCPSink(ctx, b.addr(port), standin.TCPServerOptions{Idle: 5 * time.Second})
	if err != nil {
		b.print("Failed to start TCP server!\n")
		b.prompt()
		return
	}
	b.print("TCP server started on port " + port + "\n")
	b.prompt()
	if b.disturb() {
		return
	}
	res, err := srv.Wait()
	if err != nil {
		b.print("TCP session error.\n")
		return
	}
	c := counted{bytes: res.Bytes, dur: res.Duration, printedKbps: kbps(res.Bytes, res.Duration)}
	b.print(fmt.Sprintf("New TCP session started.\nTCP session ended\n Duration:\t\t%s\n rate:\t\t\t%s\n", zTime(res.Duration.Microseconds()), zKbps(c.printedKbps)))
	b.got <- c
}

func (b *board) zephyrUpload(proto, host, port string, d time.Duration, size int, rest []string) {
	ctx := b.ctx
	addr := net.JoinHostPort(host, port)
	if proto == "udp" {
		rate := 10e3
		if len(rest) > 0 {
			rate = float64(atoi(rest[0])) * 1e3
		}
		done := make(chan struct{})
		var res standin.UDPClientResult
		var err error
		go func() {
			res, err = standin.ZperfNewUDPClient(ctx, addr, standin.UDPClientOptions{Duration: d, RateBps: rate, Length: size})
			close(done)
		}()
		if b.disturb() {
			<-done
			return
		}
		<-done
		if err != nil || res.Report == nil {
			b.print(fmt.Sprintf("UDP upload failed\n"))
			return
		}
		rp := res.Report
		us := int64(rp.StopSec)*1e6 + int64(rp.StopUsec)
		c := counted{bytes: int64(rp.TotalLen()), dur: time.Duration(us) * time.Microsecond, packets: int64(rp.Datagrams), lost: int64(rp.ErrorCnt),
			ooo: int64(rp.OutOrderCnt), hasPackets: true, hasLoss: true, jitterUS: int64(rp.Jitter2), hasJitter: true}
		c.printedKbps = kbps(c.bytes, c.dur)
		b.print(fmt.Sprintf("-\nUpload completed!\nStatistics:\t\tserver\t(client)\nDuration:\t\t%s\t(%s)\nNum packets:\t\t%d\t(%d)\nNum packets out order:\t%d\nNum packets lost:\t%d\nJitter:\t\t\t%s\nRate:\t\t\t%s\t(%s)\n",
			zTime(us), zTime(d.Microseconds()), c.packets, res.DataPackets, c.ooo, c.lost, zTime(c.jitterUS), zKbps(c.printedKbps), zKbps(kbps(res.DataBytes, d))))
		b.got <- c
		return
	}
	start := time.Now()
	res, err := standin.ZperfTCPClient(ctx, addr, standin.TCPClientOptions{Duration: d, WriteLen: size})
	el := time.Since(start)
	if err != nil {
		b.print("TCP upload failed\n")
		return
	}
	c := counted{bytes: res.BytesSent, dur: el, packets: res.Writes, hasPackets: true, printedKbps: kbps(res.BytesSent, el)}
	b.print(fmt.Sprintf("-\nUpload completed!\nDuration:\t%s\nNum packets:\t%d\nNum errors:\t0 (retry or fail)\nRate:\t\t%s\n", zTime(el.Microseconds()), c.packets, zKbps(c.printedKbps)))
	b.got <- c
}

// espUDPServer counts like the ESP-IDF UDP server: bytes from the first
// datagram until its -t timer (or 2 s of silence); it replies nothing.
func espUDPServer(ctx context.Context, addr string, secs int) (net.PacketConn, func() (int64, int64, time.Duration)) {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, nil
	}
	return pc, func() (int64, int64, time.Duration) {
		defer pc.Close()
		buf := make([]byte, 65536)
		var n, pk int64
		var first time.Time
		for i := 0; i < 1<<20 && ctx.Err() == nil; i++ {
			dl := time.Now().Add(2 * time.Second)
			if !first.IsZero() && first.Add(time.Duration(secs)*time.Second).Before(dl) {
				dl = first.Add(time.Duration(secs) * time.Second)
			}
			_ = pc.SetReadDeadline(dl)
			m, _, err := pc.ReadFrom(buf)
			if err != nil {
				if first.IsZero() {
					continue
				}
				break
			}
			if first.IsZero() {
				first = time.Now()
			}
			n += int64(m)
			pk++
		}
		return n, pk, time.Duration(secs) * time.Second
	}
}

func (b *board) espReport(mode string, bytes int64, secs int) counted {
	c := counted{bytes: bytes, dur: time.Duration(secs) * time.Second}
	mbits := float64(bytes) / 1e6 / float64(secs) * 8
	c.printedKbps = int64(mbits * 1000)
	b.print(fmt.Sprintf("\n[ ID] Interval\t\tTransfer\tBandwidth\n[  0]  0.0-%2d.0 sec\t%2.2f MBytes\t%.2f Mbits/sec\nI (%d) iperf: iperf exit\n", secs, float64(bytes)/1e6, mbits, 12000+secs))
	return c
}

func (b *board) esp(f []string) {
	if f[0] != "iperf" {
		b.print("Unrecognized command\n")
		b.prompt()
		return
	}
	_, abort := flag(f, "--abort")
	if _, ok := flag(f, "-a"); ok || abort {
		b.print("I (9000) iperf: iperf is stopped\n")
		b.prompt()
		return
	}
	_, udp := flag(f, "-u")
	p, _ := flag(f, "-p")
	ts, _ := flag(f, "-t")
	secs := max(1, atoi(ts))
	proto := "tcp"
	if udp {
		proto = "udp"
	}
	if _, ok := flag(f, "-s"); ok {
		b.print(fmt.Sprintf("I (8000) iperf: mode=%s-server sip=0.0.0.0:%s, dip=0.0.0.0:0, interval=%d, time=%d\n", proto, p, secs, secs))
		b.prompt()
		go func() {
			if udp {
				_, count := espUDPServer(b.ctx, b.addr(p), secs)
				if count == nil {
					b.print("E (8001) iperf: udp server bind failed\n")
					return
				}
				if b.disturb() {
					return
				}
				n, _, _ := count()
				b.got <- b.espReport("udp-server", n, secs)
				return
			}
			srv, err := standin.TCPSink(b.ctx, b.addr(p), standin.TCPServerOptions{Idle: 5 * time.Second})
			if err != nil {
				b.print("E (8001) iperf: tcp server bind failed\n")
				return
			}
			if b.disturb() {
				return
			}
			res, _ := srv.Wait()
			b.got <- b.espReport("tcp-server", res.Bytes, secs)
		}()
		return
	}
	host, _ := flag(f, "-c")
	addr := net.JoinHostPort(host, p)
	b.print(fmt.Sprintf("I (8000) iperf: mode=%s-client sip=127.0.0.1:5001, dip=%s, interval=%d, time=%d\n", proto, addr, secs, secs))
	b.prompt()
	go func() {
		d := time.Duration(secs) * time.Second
		var n int64
		if udp {
			bw, _ := flag(f, "-b")
			l, _ := flag(f, "-l")
			res, err := standin.ESPUDPClient(b.ctx, addr, standin.UDPClientOptions{Duration: d, RateBps: float64(max(1, atoi(bw))) * 1e6, Length: atoi(l)})
			if err != nil {
				b.print("E (9000) iperf: udp client failed\n")
				return
			}
			n = res.DataBytes
		} else {
			res, err := standin.ESPTCPClient(b.ctx, addr, standin.TCPClientOptions{Duration: d})
			if err != nil {
				b.print("E (9000) iperf: tcp client failed\n")
				return
			}
			n = res.BytesSent
		}
		b.got <- b.espReport("client", n, secs)
	}()
}

func (b *board) harmonyLine(lost, total, kb int64, d time.Duration) {
	ms := d.Milliseconds()
	pct := int64(0)
	if total > 0 {
		pct = lost * 100 / total
	}
	b.print(fmt.Sprintf("    -----------------------------------------\n    - [0.0- %d.%d sec] %3d/ %3d (%2d%%)    %4d Kbps\n", ms/1000, ms%1000/100, lost, total, pct, kb))
}

func (b *board) harmony(f []string) {
	switch f[0] {
	case "defnet":
		b.prompt()
		return
	case "iperfk":
		b.print("iperf: instance 0 killed.\n")
		b.prompt()
		return
	case "iperf":
	default:
		b.print("*** Command Processor: unknown command. ***\n")
		b.prompt()
		return
	}
	_, udp := flag(f, "-u")
	p, ok := flag(f, "-p")
	if !ok {
		p = "5001"
	}
	b.print("iperf: Starting session instance 0\n")
	if _, ok := flag(f, "-s"); ok {
		b.prompt()
		go func() {
			if udp {
				srv, err := standin.Legacy205UDPServer(b.ctx, b.addr(p), standin.UDPServerOptions{AckTries: 2, AckWait: 200 * time.Millisecond})
				if err != nil {
					b.print("iperf: Create UDP socket failed\n")
					return
				}
				if b.disturb() {
					return
				}
				res, _ := srv.Wait()
				c := counted{bytes: int64(res.Bytes), dur: res.Duration, packets: int64(res.Total), lost: int64(res.Lost), hasPackets: true, hasLoss: true}
				c.printedKbps = kbps(c.bytes, c.dur)
				b.harmonyLine(c.lost, c.packets, c.printedKbps, c.dur)
				b.print("\niperf instance 0: Rx done. Socket closed.\niperf instance 0: Ready for the next session.\n")
				b.got <- c
				return
			}
			srv, err := standin.TCPSink(b.ctx, b.addr(p), standin.TCPServerOptions{Idle: 5 * time.Second})
			if err != nil {
				b.print("iperf: Create TCP socket failed\n")
				return
			}
			if b.disturb() {
				return
			}
			res, _ := srv.Wait()
			c := counted{bytes: res.Bytes, dur: res.Duration, packets: res.Bytes / 1460, lost: 0, hasPackets: true, hasLoss: true}
			c.printedKbps = kbps(c.bytes, c.dur)
			b.harmonyLine(0, c.packets, c.printedKbps, c.dur)
			b.print("\niperf instance 0: Rx done. Socket closed.\niperf instance 0: Ready for the next session.\n")
			b.got <- c
		}()
		return
	}
	host, _ := flag(f, "-c")
	ts, _ := flag(f, "-t")
	d := time.Duration(max(1, atoi(ts))) * time.Second
	addr := net.JoinHostPort(host, p)
	b.print("iperf: Using the default interface!\n>    - RemoteNode MAC: f6 0 f5 4c 9c dc\n---------------------------------------------------------\n")
	b.print(fmt.Sprintf("iperf: Client connecting to %s, %s port %s\n\niperf: instance 0 started ...\n", host, map[bool]string{true: "UDP", false: "TCP"}[udp], p))
	go func() {
		start := time.Now()
		if udp {
			bw, _ := flag(f, "-b")
			rate, _ := strconv.ParseFloat(strings.TrimSuffix(bw, "M"), 64)
			l, _ := flag(f, "-l")
			res, err := standin.Legacy205UDPClient(b.ctx, addr, standin.UDPClientOptions{Duration: d, RateBps: rate * 1e6, Length: atoi(l)})
			if err != nil || res.Report == nil {
				b.print("iperf: client session closed.\n")
				return
			}
			el := time.Since(start)
			c := counted{bytes: res.DataBytes, dur: el, packets: res.DataPackets + int64(res.Report.ErrorCnt), lost: int64(res.Report.ErrorCnt), hasPackets: true, hasLoss: true}
			c.printedKbps = kbps(c.bytes, c.dur)
			b.harmonyLine(c.lost, c.packets, c.printedKbps, el)
			b.print("iperf: instance 0 completed ...")
			b.prompt()
			b.got <- c
			return
		}
		res, err := standin.Legacy205TCPClient(b.ctx, addr, standin.TCPClientOptions{Duration: d})
		if err != nil {
			b.print("iperf: client session closed.\n")
			return
		}
		el := time.Since(start)
		c := counted{bytes: res.BytesSent, dur: el, packets: res.Writes, hasPackets: true, hasLoss: true}
		c.printedKbps = kbps(c.bytes, c.dur)
		b.harmonyLine(0, c.packets, c.printedKbps, el)
		b.print("iperf: instance 0 completed ...")
		b.prompt()
		b.got <- c
	}()
}

func (b *board) lwipReport(kind string, bytes int64, d time.Duration) counted {
	c := counted{bytes: bytes, dur: d, printedKbps: kbps(bytes, d)}
	b.print(fmt.Sprintf("-------------------------------------------------\n IPERF Report:\n   Type: %s\n   Bytes Transferred %d\n   Duration (ms) %d\n   Bandwidth (kbitpsec) %d\n", kind, bytes, d.Milliseconds(), c.printedKbps))
	return c
}

func (b *board) lwip(f []string) {
	if f[0] != "iperf" {
		b.print("unknown command\n")
		b.prompt()
		return
	}
	p, ok := flag(f, "-p")
	if !ok {
		p = "5001"
	}
	if _, ok := flag(f, "-s"); ok {
		srv, err := standin.LwiperfTCPServer(b.ctx, b.addr(p), standin.TCPServerOptions{NoConnectBack: true})
		if err != nil {
			b.print("lwiperf: error starting server\n")
			b.prompt()
			return
		}
		b.prompt()
		go func() {
			start := time.Now()
			if b.disturb() {
				return
			}
			res, _ := srv.Wait()
			b.got <- b.lwipReport("TCP_DONE_SERVER", res.Bytes, time.Since(start))
		}()
		return
	}
	host, _ := flag(f, "-c")
	b.prompt()
	go func() {
		start := time.Now()
		res, err := standin.LwiperfTCPClient(b.ctx, net.JoinHostPort(host, p), standin.TCPClientOptions{Amount: -int32(b.lwipT / (10 * time.Millisecond))})
		if err != nil {
			b.print("lwiperf: client error\n")
			return
		}
		b.got <- b.lwipReport("TCP_DONE_CLIENT", res.BytesSent, time.Since(start))
	}()
}
