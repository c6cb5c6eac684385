// Command udpgap is a loopback UDP relay that measures how evenly a UDP
// client spaces its datagrams, whichever tool the client is. It sits between
// an iperf2-style client and its server, forwards every datagram both ways
// unchanged, and stamps each data datagram from the client with the
// kernel's receive time (SO_TIMESTAMPNS). When the client goes quiet (or
// on SIGINT/SIGTERM, or after -max) it prints one JSON line:
//
//	{"datagrams":N,"span_s":…,"rate_bps":…,"gap_mean_us":…,"gap_sd_us":…,
//	 "gap_p50_us":…,"gap_p99_us":…,"gap_max_us":…}
//
// rate_bps is (N−1) datagrams of their own length over first-to-last
// arrival. Data datagrams are those whose first 32-bit word (the iperf2
// sequence id) is positive; FINs (negative ids) are forwarded but not
// timed. It only accepts loopback addresses: it is a bench tool for
// bench/run.sh.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/udpio"
)

// stats is what the relay prints.
type stats struct {
	Datagrams int     `json:"datagrams"`
	Length    int     `json:"length"`
	Span      float64 `json:"span_s"`
	RateBPS   float64 `json:"rate_bps"`
	GapMean   float64 `json:"gap_mean_us"`
	GapSD     float64 `json:"gap_sd_us"`
	GapP50    float64 `json:"gap_p50_us"`
	GapP99    float64 `json:"gap_p99_us"`
	GapMax    float64 `json:"gap_max_us"`
	KernelTS  bool    `json:"kernel_timestamps"`
}

func main() {
	listen := flag.String("listen", "127.0.0.1:5101", "loopback address the client sends to")
	to := flag.String("to", "127.0.0.1:5001", "loopback address of the server")
	idle := flag.Duration("idle", 3*time.Second, "stop this long after the last datagram from the client")
	maxTime := flag.Duration("max", 2*time.Minute, "stop after this long whatever happens")
	flag.Parse()
	if err := run(*listen, *to, *idle, *maxTime); err != nil {
		fmt.Fprintln(os.Stderr, "udpgap:", err)
		os.Exit(1)
	}
}

func loopback(s string) error {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return fmt.Errorf("address %q: %w", s, err)
	}
	if !ap.Addr().IsLoopback() {
		return fmt.Errorf("address %q is not a loopback address", s)
	}
	return nil
}

func run(listen, to string, idle, maxTime time.Duration) error {
	for _, a := range []string{listen, to} {
		if err := loopback(a); err != nil {
			return err
		}
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	ctx, cancelMax := context.WithTimeout(ctx, maxTime)
	defer cancelMax()
	opt := udpio.Options{ReadBuffer: 8 << 20, WriteBuffer: 8 << 20}
	front, err := udpio.Listen(ctx, "udp", listen, opt)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	defer front.Close()
	back, err := udpio.Dial(ctx, "udp", to, "", opt)
	if err != nil {
		return fmt.Errorf("connecting to the server: %w", err)
	}
	defer back.Close()

	var mu sync.Mutex
	var client netip.AddrPort
	var times []time.Time
	length := 0
	lastRx := time.Now()
	started := false

	// Server → client.
	go func() {
		msgs := makeMsgs()
		for ctx.Err() == nil {
			n, err := back.ReadBatch(msgs)
			mu.Lock()
			dst := client
			mu.Unlock()
			for i := 0; i < n; i++ {
				_, _ = front.WriteBatch([]udpio.Message{{Buf: msgs[i].Buf[:msgs[i].N], Addr: dst}})
			}
			if err != nil && errors.Is(err, net.ErrClosed) {
				return
			}
		}
	}()

	// Client → server, timed.
	msgs := makeMsgs()
	for ctx.Err() == nil {
		_ = front.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, _ := front.ReadBatch(msgs)
		now := time.Now()
		mu.Lock()
		for i := 0; i < n; i++ {
			m := &msgs[i]
			client = m.Addr
			started, lastRx = true, now
			if m.N >= 4 && int32(binary.BigEndian.Uint32(m.Buf)) > 0 {
				times = append(times, m.Time)
				length = m.N
			}
			_, _ = back.WriteBatch([]udpio.Message{{Buf: m.Buf[:m.N]}})
		}
		done := started && now.Sub(lastRx) > idle
		mu.Unlock()
		if done {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	s := summarize(times, length)
	s.KernelTS = front.Capabilities().KernelRxTime
	return json.NewEncoder(os.Stdout).Encode(s)
}

func makeMsgs() []udpio.Message {
	msgs := make([]udpio.Message, 64)
	for i := range msgs {
		msgs[i].Buf = make([]byte, 65536)
	}
	return msgs
}

// summarize works out the rate and the spread of the gaps between arrivals.
func summarize(ts []time.Time, length int) stats {
	s := stats{Datagrams: len(ts), Length: length}
	if len(ts) < 2 {
		return s
	}
	gaps := make([]float64, len(ts)-1)
	for i := 1; i < len(ts); i++ {
		gaps[i-1] = ts[i].Sub(ts[i-1]).Seconds() * 1e6
	}
	s.Span = ts[len(ts)-1].Sub(ts[0]).Seconds()
	s.RateBPS = float64(len(gaps)) * float64(length) * 8 / s.Span
	s.GapMean = s.Span * 1e6 / float64(len(gaps))
	var ss float64
	for _, g := range gaps {
		ss += (g - s.GapMean) * (g - s.GapMean)
	}
	s.GapSD = math.Sqrt(ss / float64(len(gaps)))
	slices.Sort(gaps)
	s.GapP50 = gaps[len(gaps)/2]
	s.GapP99 = gaps[min(len(gaps)-1, len(gaps)*99/100)]
	s.GapMax = gaps[len(gaps)-1]
	return s
}
