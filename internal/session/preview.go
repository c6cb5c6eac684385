package session

import (
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// PreviewTest describes cfg's test before it runs (a Prepared config:
// defaults filled in), for the header lines printed before it starts.
func PreviewTest(cfg ClientConfig) result.Test {
	t := result.Test{Protocol: result.TCP, Dialect: cfg.Dialect, Host: cfg.Host, Port: cfg.Port, Duration: cfg.Duration.Seconds(),
		Bytes: cfg.Bytes, Length: cfg.Length, Streams: cfg.Parallel}
	if t.Dialect == "" {
		t.Dialect = DialectIperf2
	}
	if cfg.UDP {
		t.Protocol = result.UDP
		if t.Length == 0 {
			t.Length = DefaultUDPLength
		}
		rate := cfg.Rate
		if rate.Value == 0 {
			rate = units.Rate{Value: DefaultUDPRateBPS}
		}
		if rate.PPS {
			t.RatePPS, t.RateBPS = rate.Value, rate.Value*float64(t.Length*8)
		} else {
			t.RateBPS, t.RatePPS = rate.Value, rate.Value/float64(t.Length*8)
		}
	} else if t.Length == 0 {
		t.Length = DefaultTCPLength
	}
	switch {
	case cfg.Reverse:
		t.Mode, t.Direction = "reverse", result.DirReceive
	case cfg.Bidir:
		t.Mode, t.Direction = "bidir", result.DirBidir
	case cfg.FullDuplex:
		t.Mode, t.Direction = "full-duplex", result.DirBidir
	case cfg.Dual:
		t.Mode, t.Direction = "dual", result.DirBidir
	case cfg.Tradeoff:
		t.Mode, t.Direction = "tradeoff", result.DirSend
	default:
		t.Direction = result.DirSend
	}
	return t
}
