package sweep

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// shellDevice is a Device whose server counts what it is told to.
type shellDevice struct {
	dialect string
	refuse  error
	checked []session.ClientConfig
	ran     []session.ClientConfig
}

func (d *shellDevice) Dialect() string { return d.dialect }
func (d *shellDevice) Check(cfg session.ClientConfig) error {
	d.checked = append(d.checked, cfg)
	return d.refuse
}
func (d *shellDevice) Run(_ context.Context, cfg session.ClientConfig) (*result.Result, error) {
	d.ran = append(d.ran, cfg)
	got, lost := int64(900), int64(100)
	return &result.Result{Sender: &result.Sender{Packets: 1001, PacketsPerSecond: 1000, Seconds: 1},
		Device: &result.Device{Shell: "fake", Role: "server", Packets: &got, Lost: &lost}}, nil
}
func (d *shellDevice) Counts(dev result.Device) (int64, int64, bool) {
	return *dev.Packets, *dev.Lost, true
}

// UseDevice runs every trial through the device, in the dialect its server
// needs, and judges it on the device's own counts when no report came
// back; a test the device refuses leaves the setup as it was.
func TestUseDevice(t *testing.T) {
	s, err := Options{Port: 5001, Sizes: "200,1000", Mode: ModeWirebench, Loss: "0", Trial: "1s", Confirm: "0", Medium: "eth1g", Repeat: 1}.Setup("192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	before := s.Runner
	refused := errors.New("no UDP server")
	if err := s.UseDevice(&shellDevice{refuse: refused}, "telnet:192.0.2.1"); !errors.Is(err, refused) || s.Test.DUT != "" {
		t.Fatalf("refused: error %v, DUT %q", err, s.Test.DUT)
	}
	if _, ok := s.Runner.(SessionRunner); !ok || s.Runner.(SessionRunner).Run != nil || before == nil {
		t.Fatalf("a refused device changed the runner: %#v", s.Runner)
	}
	dev := &shellDevice{dialect: session.DialectIperf3}
	if err := s.UseDevice(dev, "telnet:192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if s.Test.DUT != "telnet:192.0.2.1" || s.Test.Dialect != session.DialectIperf3 {
		t.Errorf("test description: DUT %q, dialect %q", s.Test.DUT, s.Test.Dialect)
	}
	if c := dev.checked[0]; !c.UDP || c.Duration != time.Second || c.Bytes != 0 || c.Length != 200 {
		t.Errorf("checked %+v, want a timed UDP trial of the first size", c)
	}
	o, err := s.Runner.Trial(context.Background(), Spec{Size: 1000, RatePPS: 1000, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(dev.ran) != 1 || dev.ran[0].Dialect != session.DialectIperf3 || dev.ran[0].Host != "192.0.2.1" || dev.ran[0].Port != 5001 {
		t.Errorf("ran %+v", dev.ran)
	}
	if o.CountedBy != result.CountedByDevice || o.Received != 900 || o.Lost != 100 {
		t.Errorf("outcome counted by %q: %d received, %d lost; want the device's 900 and 100", o.CountedBy, o.Received, o.Lost)
	}
	if err := (Options{Mode: ModeReflect}).CheckDevice(); err == nil {
		t.Error("a reflector was taken for a device's server")
	}
	if err := (Options{Mode: ModeIperf2, Packets: 10}).CheckDevice(); err == nil {
		t.Error("--packets was taken with a device")
	}
}
