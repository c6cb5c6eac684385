package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ManyPlan is the many-clients row: one wirebench server, UDP iperf 2
// clients, TCP iperf 2 clients and iperf3 clients, all at once, each from
// its own 127.x source address, at nice 10.
type ManyPlan struct {
	UDP     int     `json:"udp_clients"`
	TCP     int     `json:"tcp_clients"`
	Iperf3  int     `json:"iperf3_clients"`
	Seconds int     `json:"seconds"`
	UDPBPS  float64 `json:"udp_rate_bps"`
	TCPBPS  float64 `json:"tcp_rate_bps"`
}

// DefaultMany is 1000 clients: 600 UDP at 100 kbit/s, 200 TCP and 200
// iperf3 at 1 Mbit/s, 8 s each (iperf 2 TCP with 16 KiB writes: its
// default 128 KiB is refused with -b 1M).
var DefaultMany = ManyPlan{UDP: 600, TCP: 200, Iperf3: 200, Seconds: 8, UDPBPS: 100e3, TCPBPS: 1e6}

// ManyRow is what the many-clients row measured.
type ManyRow struct {
	Plan ManyPlan `json:"plan"`
	// Clients that completed: a UDP client that printed its server
	// report, a TCP client that ended well with its summary.
	UDPReports int `json:"udp_reports"`
	UDPNoAck   int `json:"udp_no_ack"` // printed "did not receive ack of last datagram"
	TCPDone    int `json:"tcp_done"`
	Iperf3Done int `json:"iperf3_done"`
	// ServerUDP and ServerTCP are the tests the server finished, by
	// protocol (its /metrics).
	ServerUDP  int `json:"server_udp_results"`
	ServerTCP  int `json:"server_tcp_results"`
	ServerIdle int `json:"server_udp_idle_ended"` // UDP tests it ended without a FIN (its text output says so)
	// PeakRssAnonKiB is the server's largest RssAnon (/proc/PID/status,
	// sampled every 100 ms): its memory without file-backed pages.
	PeakRssAnonKiB int64 `json:"peak_rss_anon_kib"`
	// SocketDrops is the drops count of the server's UDP socket
	// (/proc/net/udp) at the end.
	SocketDrops int64 `json:"udp_socket_drops"`
	// Goroutines of the server (go_goroutines of its /metrics) before
	// the clients and once every test ended.
	GoroutinesIdle  int     `json:"goroutines_idle"`
	GoroutinesAfter int     `json:"goroutines_after"`
	Seconds         float64 `json:"seconds"`
	// ServerLog is the first 20 lines of the server's log (stderr).
	ServerLog []string `json:"server_log,omitempty"`
	// Failed holds the output of the first client of each kind that did
	// not complete.
	Failed map[string]string `json:"failed_sample,omitempty"`
	Error  string            `json:"error,omitempty"`
}

// manySource is the source address of client i: 127.1.x.y, never
// 127.0.0.1 (the server's).
func manySource(i int) string { return fmt.Sprintf("127.1.%d.%d", i/250, i%250+1) }

// runMany runs the many-clients row.
func runMany(tools map[string]string, pl ManyPlan, say func(string, ...any)) (row ManyRow) {
	row.Plan = pl
	began := time.Now()
	defer func() { row.Seconds = time.Since(began).Seconds() }()
	port, err := freePort()
	if err != nil {
		row.Error = err.Error()
		return row
	}
	web, err := freePort()
	if err != nil {
		row.Error = err.Error()
		return row
	}
	limit := time.Duration(pl.Seconds)*time.Second + 90*time.Second
	// The server as a user starts it: text output, every test saved in
	// a results store (a fresh one, in a temporary directory).
	dir, err := os.MkdirTemp("", "wirebench-many.")
	if err != nil {
		row.Error = err.Error()
		return row
	}
	defer os.RemoveAll(dir)
	srv, err := start(tools[Wirebench], []string{"server", "--db", filepath.Join(dir, "results.db"), "-B", Loopback, "-p", strconv.Itoa(port),
		"--iperf3-port", "0", "--web", net2(web)}, limit)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	defer srv.stop(0)
	if err := waitBound(srv, port, false); err != nil {
		row.Error = "wirebench server: " + err.Error()
		return row
	}
	metricsURL := "http://" + net2(web) + "/metrics"
	row.GoroutinesIdle = pollMetric(metricsURL, "go_goroutines", 5*time.Second, func(float64) bool { return true })
	peak := watchRssAnon(srv.cmd.Process.Pid)
	say("many clients: %d UDP, %d TCP, %d iperf3 for %d s against one wirebench server", pl.UDP, pl.TCP, pl.Iperf3, pl.Seconds)
	clients, kinds := launchMany(&row, tools, pl, port, limit)
	tallyMany(&row, clients, kinds)
	say("many clients: clients ended; waiting for the server's tests to end")
	pollMetric(metricsURL, "wirebench_server_active_tests", 60*time.Second, func(v float64) bool { return v == 0 })
	row.GoroutinesAfter = pollMetric(metricsURL, "go_goroutines", 30*time.Second, func(v float64) bool { return int(v) <= row.GoroutinesIdle })
	row.SocketDrops = udpDrops(port)
	row.ServerUDP = int(sumMetric(metricsURL, `wirebench_server_tests_total{dialect="iperf2",outcome=`, `protocol="udp"`))
	row.ServerTCP = int(sumMetric(metricsURL, `wirebench_server_tests_total{`, `protocol="tcp"`))
	row.PeakRssAnonKiB = peak()
	_ = srv.cmd.Process.Signal(syscall.SIGINT)
	srv.stop(10 * time.Second)
	row.ServerIdle = bytes.Count(srv.out.Bytes(), []byte("never sent a FIN"))
	if lines := strings.SplitN(srv.errb.String(), "\n", 21); len(lines) > 0 {
		row.ServerLog = lines[:min(len(lines), 20)]
	}
	return row
}

// launchMany starts the clients of the many-clients row against the server
// on port, each from its own source address, and returns them with their
// kinds ("udp", "tcp", "iperf3"). A client that does not start is left out
// and its error kept in row.
func launchMany(row *ManyRow, tools map[string]string, pl ManyPlan, port int, limit time.Duration) (clients []*proc, kinds []string) {
	ps, secs := strconv.Itoa(port), strconv.Itoa(pl.Seconds)
	launch := func(kind, bin string, args ...string) {
		p, err := start("nice", append([]string{"-n", "10", bin}, args...), limit)
		if err != nil {
			row.Error = err.Error()
			return
		}
		clients = append(clients, p)
		kinds = append(kinds, kind)
	}
	n := 0
	for range pl.UDP {
		launch("udp", tools[Iperf2], "-c", Loopback, "-p", ps, "-t", secs, "-u", "-b", rateArg(pl.UDPBPS), "-B", manySource(n))
		n++
	}
	for range pl.TCP {
		launch("tcp", tools[Iperf2], "-c", Loopback, "-p", ps, "-t", secs, "-b", rateArg(pl.TCPBPS), "-l", "16384", "-B", manySource(n))
		n++
	}
	for range pl.Iperf3 {
		launch("iperf3", tools[Iperf3], "-c", Loopback, "-p", ps, "-t", secs, "-b", rateArg(pl.TCPBPS), "-B", manySource(n))
		n++
	}
	return clients, kinds
}

// tallyMany waits for every client and counts in row those that completed,
// keeping the output of the first of each kind that did not.
func tallyMany(row *ManyRow, clients []*proc, kinds []string) {
	row.Failed = map[string]string{}
	for i, c := range clients {
		<-c.done
		out := append(c.out.Bytes(), c.errb.Bytes()...)
		ok := c.cmd.ProcessState != nil && c.cmd.ProcessState.Success()
		done := false
		switch kinds[i] {
		case "udp":
			done = bytes.Contains(out, []byte("Server Report"))
			if done {
				row.UDPReports++
			}
			if bytes.Contains(out, []byte("did not receive ack")) {
				row.UDPNoAck++
			}
		case "tcp":
			if done = ok && bytes.Contains(out, []byte("bits/sec")); done {
				row.TCPDone++
			}
		case "iperf3":
			if done = ok && bytes.Contains(out, []byte("iperf Done")); done {
				row.Iperf3Done++
			}
		}
		if _, seen := row.Failed[kinds[i]]; !done && !seen {
			row.Failed[kinds[i]] = fmt.Sprintf("%v: %s", c.cmd.ProcessState, bytes.TrimSpace(out))
		}
	}
}

func net2(port int) string { return Loopback + ":" + strconv.Itoa(port) }

// rateArg is a rate in plain bit/s (iperf 2 reads "M" as 2^20).
func rateArg(bps float64) string { return strconv.FormatFloat(bps, 'f', 0, 64) }

// pollMetric reads metric from the Prometheus text at url until ok says
// its value will do or d has passed; it returns the last value (-1: never
// read).
func pollMetric(url, metric string, d time.Duration, ok func(float64) bool) int {
	last := -1
	for end := time.Now().Add(d); ; time.Sleep(200 * time.Millisecond) {
		if v, err := readMetric(url, metric); err == nil {
			last = int(v)
			if ok(v) {
				return last
			}
		}
		if time.Now().After(end) {
			return last
		}
	}
}

func readMetric(url, metric string) (float64, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == metric {
			return strconv.ParseFloat(f[1], 64)
		}
	}
	return 0, fmt.Errorf("%s: no %s", url, metric)
}

// watchRssAnon samples RssAnon of pid every 100 ms; the function it
// returns stops sampling and returns the peak in KiB.
func watchRssAnon(pid int) func() int64 {
	var mu sync.Mutex
	var peak int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if v := rssAnon(pid); v > 0 {
				mu.Lock()
				peak = max(peak, v)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(stop)
		<-done
		return peak
	}
}

// rssAnon is the RssAnon of pid in KiB (0 if unknown).
func rssAnon(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "RssAnon:" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}

// udpDrops is the drops column of the UDP socket bound to 127.0.0.1:port
// in /proc/net/udp (-1 if not found).
func udpDrops(port int) int64 {
	b, err := os.ReadFile("/proc/net/udp")
	if err != nil {
		return -1
	}
	local := fmt.Sprintf("0100007F:%04X", port)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 13 && f[1] == local {
			v, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
			return v
		}
	}
	return -1
}

// sumMetric sums the samples at url whose name and labels start with
// prefix and contain label (-1: not read).
func sumMetric(url, prefix, label string) float64 {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && strings.HasPrefix(f[0], prefix) && strings.Contains(f[0], label) {
			v, _ := strconv.ParseFloat(f[1], 64)
			sum += v
		}
	}
	return sum
}
