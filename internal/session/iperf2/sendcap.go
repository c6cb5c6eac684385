package iperf2

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// sendCaps applies --max-rate (UDP only, where the source is not proved)
// and --max-duration to the rate (bit/s) and duration a client asked this
// server to send at and for, saying what it cut in r and in the log.
func (s *server) sendCaps(proto string, r *result.Result, peer netip.AddrPort, bps float64, d time.Duration) (float64, time.Duration) {
	if limit := s.cfg.MaxSendRate; proto == "udp" && limit > 0 && bps > limit {
		r.Warn(fmt.Sprintf("the client asked for %s; this server sends at most %s (--max-rate)", units.FormatBits(bps), units.FormatBits(limit)))
		s.Log("max-rate", fmt.Sprintf("udp: %s asked this server to send at %s; sending at %s (--max-rate)", peer, units.FormatBits(bps), units.FormatBits(limit)))
		bps = limit
	}
	if d > s.cfg.MaxDuration {
		r.Warn(fmt.Sprintf("the client asked for %v; this server sends for at most %v (--max-duration)", d, s.cfg.MaxDuration))
		s.Log("max-duration", fmt.Sprintf("%s: %s asked this server to send for %v; sending for %v (--max-duration)", proto, peer, d, s.cfg.MaxDuration))
		d = s.cfg.MaxDuration
	}
	return bps, d
}
