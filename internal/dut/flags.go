package dut

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
)

// Flags are the --dut flags, as typed (docs/dut.md).
type Flags struct {
	// Spec is where the device's shell is (ParseSpec), Shell its name
	// (Shells, or "auto"), Iface the device's interface for the test,
	// Transcript the file the session is also written to ("": none).
	Spec, Shell, Iface, Transcript string
	// StepTimeout and ReportTimeout are in seconds.
	StepTimeout, ReportTimeout float64
	// The test the device runs as client against our server: Peer is the
	// address it connects to, Time how long it sends (seconds), Rate and
	// Len its rate and datagram length as typed.
	Peer, Rate, Len string
	Time            float64
}

// CheckShell rejects a Shell that names no shell.
func (f Flags) CheckShell() error {
	if slices.Contains(Shells(), f.Shell) {
		return nil
	}
	return fmt.Errorf("invalid --dut-shell %q: want one of %s", f.Shell, strings.Join(Shells(), ", "))
}

// Options checks the flags and returns the session options and the
// parsed spec. Every error is a mistake in them.
func (f Flags) Options() (Options, Spec, error) {
	sp, err := ParseSpec(f.Spec)
	if err != nil {
		return Options{}, sp, err
	}
	if err := f.CheckShell(); err != nil {
		return Options{}, sp, err
	}
	o := Options{Shell: f.Shell}
	for _, t := range []struct {
		name string
		v    float64
	}{{"--dut-timeout", f.StepTimeout}, {"--dut-report-timeout", f.ReportTimeout}} {
		if t.v <= 0 || math.IsNaN(t.v) || math.IsInf(t.v, 0) || t.v > 3600 {
			return o, sp, fmt.Errorf("invalid %s %v: want seconds > 0", t.name, t.v)
		}
	}
	o.StepTimeout = time.Duration(f.StepTimeout * float64(time.Second))
	o.ReportTimeout = time.Duration(f.ReportTimeout * float64(time.Second))
	return o, sp, nil
}

// ShellDialect is the dialect the shell named by Shell needs, before it is
// opened ("": not known yet).
func (f Flags) ShellDialect() string {
	if f.Shell == ZephyrIperf3Shell {
		return session.DialectIperf3
	}
	return ""
}

// ServerTest is the test the device (at sp) runs as client against our
// server on port, sending UDP or TCP. Its Peer is Flags.Peer, "" when not
// given: RouteSource finds the default. Every error is a mistake in the
// flags.
func (f Flags) ServerTest(udp bool, sp Spec, port int) (Test, error) {
	t := Test{Proto: "tcp", Port: port, Peer: f.Peer, Iface: f.Iface}
	if udp {
		t.Proto = "udp"
	}
	if f.Time <= 0 || math.IsNaN(f.Time) || math.IsInf(f.Time, 0) || f.Time > 86400 {
		return t, fmt.Errorf("invalid --dut-time %v: want seconds > 0", f.Time)
	}
	t.Duration = time.Duration(f.Time * float64(time.Second))
	r, err := units.ParseRate(f.Rate)
	if err != nil || r.PPS || r.Value <= 0 {
		return t, fmt.Errorf("invalid --dut-rate %q: want a rate in bit/s like 10M", f.Rate)
	}
	t.RateBPS = r.Value
	if f.Len != "" {
		n, err := units.ParseSize(f.Len)
		if err != nil || n <= 0 || n > 65507 {
			return t, fmt.Errorf("invalid --dut-len %q: want 1 to 65507 bytes", f.Len)
		}
		t.Length = int(n)
	}
	if t.Peer == "" && sp.Host() == "" {
		return t, fmt.Errorf("--dut-peer ADDR is needed: a %s console does not tell which of our addresses the device reaches", sp.Kind)
	}
	return t, nil
}
