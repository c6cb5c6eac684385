package iperf2

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// ReflectConfig is one paced run of datagrams to a UDP reflector (a
// `wirebench reflect`, a device in loopback): what goes out, and how long
// to wait for what comes back.
type ReflectConfig struct {
	Host string
	Port int
	// Length is the UDP payload of every datagram (at least 16 bytes: the
	// iperf2 datagram header, id and send time, that comes back with it).
	Length int
	// PPS is the rate in datagrams per second (> 0).
	PPS float64
	// Duration or Packets bounds the run (one of them > 0).
	Duration time.Duration
	Packets  int64
	// Drain is how long to keep listening after the last datagram went
	// out for ones still on their way back (default 500 ms); listening
	// also ends once every datagram sent came back.
	Drain time.Duration
}

// ReflectResult is what a reflect run sent and what came back.
type ReflectResult struct {
	Sent       int64
	SendErrors int64
	// OfferedPPS is the rate the sender really offered (datagrams after the
	// first over the time from the first send to the last).
	OfferedPPS float64
	// SendSeconds spans the first send to the last; MaxLag is the furthest
	// the sender fell behind its schedule.
	SendSeconds float64
	MaxLag      time.Duration
	// Received counts distinct datagrams of this run that came back;
	// Duplicates the extra copies; Stray datagrams that were not ours.
	Received, Duplicates, Stray int64
	// ReceiveSeconds spans the first datagram back to the last.
	ReceiveSeconds float64
	// RTTs are the round-trip times of the datagrams that came back, in
	// arrival order (kernel receive time minus the send time they carry);
	// Arrivals their kernel receive times, since the first.
	RTTs     []time.Duration
	Arrivals []time.Duration
	// HostDrops counts datagrams our own socket dropped (its receive buffer
	// was full): they came back but were lost here; -1 when unknown.
	HostDrops int64
}

// Lost is what did not come back.
func (r *ReflectResult) Lost() int64 { return max(r.Sent-r.Received, 0) }

// reflectLayout stamps each datagram as an iperf2 2.1 datagram (id from 1
// and the send time), so a reflector's data counts apply to it too.
const reflectLayout = i2wire.LayoutModern

// RunReflect sends cfg's datagrams to a reflector and counts what comes
// back, with the round-trip time of each. An error means the run could not
// start or sending could not go on; the result then holds what was done.
func RunReflect(ctx context.Context, cfg ReflectConfig) (ReflectResult, error) {
	var res ReflectResult
	if cfg.Length < reflectLayout.HeaderLen() || cfg.Length > 65507 {
		return res, session.ConfigError{Err: fmt.Errorf("reflect: datagram length %d: want %d to 65507 bytes", cfg.Length, reflectLayout.HeaderLen())}
	}
	if !(cfg.PPS > 0) || (cfg.Duration <= 0 && cfg.Packets <= 0) {
		return res, session.ConfigError{Err: errors.New("reflect: a positive rate and a duration or a packet count are needed")}
	}
	if cfg.Drain <= 0 {
		cfg.Drain = 500 * time.Millisecond
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	conn, err := udpio.Dial(ctx, "udp", addr, "", session.UDPClientOptions())
	if err != nil {
		return res, fmt.Errorf("reflect: opening udp socket to %s: %w", addr, err)
	}
	defer conn.Close()
	drops0, dropsKnown := conn.Drops()

	tmpl := make([]byte, cfg.Length)
	session.FillPattern(tmpl)
	clear(tmpl[:min(len(tmpl), 36)])
	first := reflectLayout.FirstID()

	var (
		mu      sync.Mutex
		seen    = map[int64]struct{}{}
		sentTo  = int64(-1) // highest id sent, once sending ended; -1 while sending
		firstRx time.Time
		lastRx  time.Time
	)
	recvCtx, stopRecv := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRecv()
	recvDone := make(chan error, 1)
	go func() {
		recvDone <- engine.ReceiveUDP(recvCtx, conn, engine.UDPReceiveConfig{}, func(m *udpio.Message) bool {
			id, sec, usec, ok := i2wire.ParseDatagram(m.Buf[:m.N], reflectLayout, false)
			mu.Lock()
			defer mu.Unlock()
			if !ok || id < first || m.N != cfg.Length {
				res.Stray++
				return true
			}
			if _, dup := seen[id]; dup {
				res.Duplicates++
				return true
			}
			seen[id] = struct{}{}
			if firstRx.IsZero() {
				firstRx = m.Time
			}
			lastRx = m.Time
			res.RTTs = append(res.RTTs, m.Time.Sub(time.Unix(int64(sec), int64(usec)*1000)))
			res.Arrivals = append(res.Arrivals, m.Time.Sub(firstRx))
			// Everything came back: stop listening.
			return sentTo < 0 || int64(len(seen)) < sentTo-first+1
		})
	}()

	bytes := int64(0)
	if cfg.Packets > 0 {
		bytes = cfg.Packets * int64(cfg.Length)
	}
	send, sendErr := engine.SendUDP(ctx, conn, engine.UDPSendConfig{
		Template: tmpl,
		Stamp:    func(b []byte, id int64, now time.Time) { i2wire.PutDatagram(b, reflectLayout, id, now) },
		PPS:      cfg.PPS, Duration: cfg.Duration, Bytes: bytes, FirstID: first,
	}, new(stats.Counters))
	res.Sent, res.SendErrors, res.MaxLag = send.Packets, send.Errors, send.MaxLag
	res.OfferedPPS = send.OfferedRate()
	if send.Last.After(send.First) {
		res.SendSeconds = send.Last.Sub(send.First).Seconds()
	}
	mu.Lock()
	sentTo = send.NextID - 1
	all := int64(len(seen)) >= send.Packets
	mu.Unlock()
	if !all {
		// Wait for stragglers; ReceiveUDP ends earlier once all are back.
		select {
		case <-time.After(cfg.Drain):
		case err := <-recvDone:
			recvDone <- err
		}
	}
	stopRecv()
	recvErr := <-recvDone
	mu.Lock()
	defer mu.Unlock()
	res.Received = int64(len(seen))
	if lastRx.After(firstRx) {
		res.ReceiveSeconds = lastRx.Sub(firstRx).Seconds()
	}
	res.RTTs = slices.Clip(res.RTTs)
	res.Arrivals = slices.Clip(res.Arrivals)
	res.HostDrops = -1
	if d, ok := conn.Drops(); ok && dropsKnown {
		res.HostDrops = int64(d - drops0)
	}
	if sendErr != nil {
		return res, fmt.Errorf("reflect: %w", sendErr)
	}
	if recvErr != nil {
		return res, fmt.Errorf("reflect: receiving: %w", recvErr)
	}
	return res, nil
}
