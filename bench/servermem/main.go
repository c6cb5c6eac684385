// Command servermem measures the memory of the server's per-test UDP
// state (udpstream.Receiver: ids, counters, jitter, transit histograms,
// arrival times) at a load this host's sockets cannot deliver: it feeds
// -tests receivers -rate datagrams per second each for -seconds of
// simulated time, in process and without sockets or sleeping, and every 5
// simulated seconds prints the live heap (after a GC) and the process's
// RSS. bench/serverrss.sh measures the whole server over loopback.
//
//	go run ./bench/servermem                          # 500 tests × 60 s × 1000/s
//	go run ./bench/servermem -tests 100 -seconds 600
package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2/udpstream"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

func main() {
	tests := flag.Int("tests", 500, "UDP tests at once")
	rate := flag.Int("rate", 1000, "datagrams per second of each test")
	seconds := flag.Int("seconds", 60, "simulated seconds of each test")
	length := flag.Int("len", 64, "datagram payload in bytes")
	flag.Parse()
	h := iperf2.NewClientHeader(true, 1, 5001)
	tmpl := (&udpstream.Sender{Layout: iperf2.LayoutModern, Header: h.AppendUDPTo(nil), Length: *length}).Template(session.FillPattern)
	base := time.Unix(1_700_000_000, 0)
	rx := make([]*udpstream.Receiver, *tests)
	for i := range rx {
		rx[i] = udpstream.NewReceiver(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(10000+i)), tmpl, base)
	}
	fmt.Printf("servermem: %d tests × %d s × %d/s of %d-byte datagrams, fed in process\n", *tests, *seconds, *rate, *length)
	fmt.Printf("%-6s %-12s %-14s %s\n", "t_s", "datagrams", "heap_live_MiB", "rss_MiB")
	report := func(sec int) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fmt.Printf("%-6d %-12d %-14.1f %d\n", sec, int64(sec)*int64(*rate)*int64(*tests), float64(m.HeapAlloc)/(1<<20), rssMiB())
	}
	report(0)
	gap := time.Second / time.Duration(*rate)
	id := int64(1)
	for sec := 1; sec <= *seconds; sec++ {
		for k := 0; k < *rate; k++ {
			at := base.Add(time.Duration(id) * gap)
			iperf2.PutDatagram(tmpl, iperf2.LayoutModern, id, at.Add(-50*time.Microsecond))
			for _, r := range rx {
				r.Feed(tmpl, at)
			}
			id++
		}
		if sec%5 == 0 {
			report(sec)
		}
	}
	at := base.Add(time.Duration(id) * gap)
	iperf2.PutDatagram(tmpl, iperf2.LayoutModern, -id, at)
	var got int64
	for _, r := range rx {
		r.Feed(tmpl, at)
		_ = r.Diagnose()
		got += r.Summary().Packets
	}
	fmt.Printf("after the FINs: %d datagrams counted, want %d\n", got, int64(*tests)*(id))
	report(*seconds)
	runtime.KeepAlive(rx)
}

// rssMiB is the process's resident memory (VmRSS), in MiB; -1 when unknown.
func rssMiB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		var kb int
		if _, err := fmt.Sscanf(l, "VmRSS: %d kB", &kb); err == nil {
			return kb / 1024
		}
	}
	return -1
}
