package session

import (
	"context"
	"net"
	"slices"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/stats"
)

// TCPSent is what one TCP sender wrote and what its peer acknowledged.
type TCPSent struct {
	Res engine.TCPResult // Res.Bytes counts the stream's header too
	Del engine.TCPDelivery
	Err error
}

// SendTCPDelivered writes as engine.SendTCP does (hdr bytes were already
// written on conn; with zeroCopy through sendfile, as -Z asks; no write
// runs past the end of cfg's duration), shuts the write side down when
// closeWrite is set (a FIN tells the peer the data ended, as iperf 2
// does), calls wrote (when not nil) and waits, bounded, for the peer to
// acknowledge what was written. wrote lets a protocol that ends with a
// control message (iperf3's TEST_END) send it while the wait runs.
func SendTCPDelivered(ctx context.Context, conn net.Conn, zeroCopy bool, cfg engine.TCPSendConfig, c *stats.Counters, closeWrite bool, wrote func(), opt engine.DrainOptions) TCPSent {
	var s TCPSent
	s.Res, s.Err = SendTCP(ctx, conn, zeroCopy, cfg, c)
	s.Res.Bytes += cfg.Counted
	if closeWrite {
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}
	if wrote != nil {
		wrote()
	}
	if s.Err == nil {
		s.Del = engine.DrainTCP(ctx, conn, s.Res.Bytes, opt)
	}
	return s
}

// Sender is the result of one TCP sender: the bytes the peer acknowledged
// over the time until the last of them was acknowledged, or, where the
// system does not tell, the bytes written over the time of the writes.
func (s TCPSent) Sender() *result.Sender {
	sd := &result.Sender{Bytes: s.Res.Bytes, Seconds: s.Res.End.Sub(s.Res.Start).Seconds(), Basis: result.BasisWritten}
	if s.Del.Known {
		sd.Bytes, sd.Basis = s.Del.Acked, result.BasisAcknowledged
		sd.Seconds = later(s.Del.End, s.Res.End).Sub(s.Res.Start).Seconds()
		if sd.Bytes != s.Res.Bytes {
			sd.BytesWritten = s.Res.Bytes
		}
		sd.TCP = engine.TCPFigures(s.Del.Info)
	}
	if sd.Seconds > 0 {
		sd.BitsPerSecond = float64(sd.Bytes) * 8 / sd.Seconds
	}
	return sd
}

// WarnDelivery adds, once each, the warnings of the senders: figures from
// bytes written, or a drain that ended before everything was acknowledged.
func WarnDelivery(r *result.Result, sent ...TCPSent) {
	for _, s := range sent {
		if s.Err != nil && !s.Del.Known {
			continue // the write error is the result's error
		}
		if w := s.Del.Warning(); w != "" && !slices.Contains(r.Warnings, w) {
			r.Warn(w)
		}
	}
}

// AddSender sums one stream's sender into a test's total: bytes add up,
// the time is the longest stream's.
func AddSender(total, s *result.Sender) {
	total.Bytes += s.Bytes
	total.Seconds = max(total.Seconds, s.Seconds)
	AddTCPFigures(total, s)
	if total.Seconds > 0 {
		total.BitsPerSecond = float64(total.Bytes) * 8 / total.Seconds
	}
}

// AddTCPFigures adds a stream's bytes written, basis and TCP_INFO figures
// to a total (the caller adds bytes and time).
func AddTCPFigures(total, s *result.Sender) {
	total.BytesWritten += max(s.BytesWritten, s.Bytes)
	// A sum with any stream counted from bytes written is counted from
	// bytes written: the last stream's basis alone would overclaim.
	if total.Basis != result.BasisWritten {
		total.Basis = s.Basis
	}
	if s.TCP != nil {
		if total.TCP == nil {
			total.TCP = new(result.TCPInfo)
		}
		total.TCP.Merge(s.TCP)
	}
}

// SettleWritten drops a total's BytesWritten when it equals Bytes (only a
// difference is reported).
func SettleWritten(s *result.Sender) {
	if s.BytesWritten == s.Bytes {
		s.BytesWritten = 0
	}
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
