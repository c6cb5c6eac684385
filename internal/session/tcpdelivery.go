package session

import (
	"context"
	"net"
	"slices"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/stats"
)

// tcpSent is what one TCP sender wrote and what its peer acknowledged.
type tcpSent struct {
	res engine.TCPResult // res.Bytes counts the stream's header too
	del engine.TCPDelivery
	err error
}

// sendTCPDelivered writes as engine.SendTCP does (hdr bytes were already
// written on conn; with zeroCopy through sendfile, as -Z asks; no write
// runs past the end of cfg's duration), shuts the write side down when
// closeWrite is set (a FIN tells the peer the data ended, as iperf 2
// does), calls wrote (when not nil) and waits, bounded, for the peer to
// acknowledge what was written. wrote lets a protocol that ends with a
// control message (iperf3's TEST_END) send it while the wait runs.
func sendTCPDelivered(ctx context.Context, conn net.Conn, zeroCopy bool, cfg engine.TCPSendConfig, c *stats.Counters, closeWrite bool, wrote func(), opt engine.DrainOptions) tcpSent {
	var s tcpSent
	s.res, s.err = sendTCP(ctx, conn, zeroCopy, cfg, c)
	s.res.Bytes += cfg.Counted
	if closeWrite {
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}
	if wrote != nil {
		wrote()
	}
	if s.err == nil {
		s.del = engine.DrainTCP(ctx, conn, s.res.Bytes, opt)
	}
	return s
}

// sender is the result of one TCP sender: the bytes the peer acknowledged
// over the time until the last of them was acknowledged, or, where the
// system does not tell, the bytes written over the time of the writes.
func (s tcpSent) sender() *result.Sender {
	sd := &result.Sender{Bytes: s.res.Bytes, Seconds: s.res.End.Sub(s.res.Start).Seconds(), Basis: result.BasisWritten}
	if s.del.Known {
		sd.Bytes, sd.Basis = s.del.Acked, result.BasisAcknowledged
		sd.Seconds = later(s.del.End, s.res.End).Sub(s.res.Start).Seconds()
		if sd.Bytes != s.res.Bytes {
			sd.BytesWritten = s.res.Bytes
		}
		sd.TCP = engine.TCPFigures(s.del.Info)
	}
	if sd.Seconds > 0 {
		sd.BitsPerSecond = float64(sd.Bytes) * 8 / sd.Seconds
	}
	return sd
}

// warnDelivery adds, once each, the warnings of the senders: figures from
// bytes written, or a drain that ended before everything was acknowledged.
func warnDelivery(r *result.Result, sent ...tcpSent) {
	for _, s := range sent {
		if s.err != nil && !s.del.Known {
			continue // the write error is the result's error
		}
		if w := s.del.Warning(); w != "" && !slices.Contains(r.Warnings, w) {
			r.Warn(w)
		}
	}
}

// addSender sums one stream's sender into a test's total: bytes add up,
// the time is the longest stream's.
func addSender(total, s *result.Sender) {
	total.Bytes += s.Bytes
	total.Seconds = max(total.Seconds, s.Seconds)
	addTCPFigures(total, s)
	if total.Seconds > 0 {
		total.BitsPerSecond = float64(total.Bytes) * 8 / total.Seconds
	}
}

// addTCPFigures adds a stream's bytes written, basis and TCP_INFO figures
// to a total (the caller adds bytes and time).
func addTCPFigures(total, s *result.Sender) {
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

// settleWritten drops a total's BytesWritten when it equals Bytes (only a
// difference is reported).
func settleWritten(s *result.Sender) {
	if s.BytesWritten == s.Bytes {
		s.BytesWritten = 0
	}
}
