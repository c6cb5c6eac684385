package dut

import (
	"strings"
	"testing"
	"time"
)

// TestFlags: the --dut flags are checked and turned into the session's
// options and the device's test against our server.
func TestFlags(t *testing.T) {
	f := Flags{Spec: "telnet:192.0.2.1:23", Shell: "auto", StepTimeout: 2, ReportTimeout: 3, Time: 10, Rate: "20M", Len: "1470"}
	o, sp, err := f.Options()
	if err != nil || o.StepTimeout != 2*time.Second || o.ReportTimeout != 3*time.Second || sp.Host() != "192.0.2.1" {
		t.Fatalf("Options: %+v, %+v, %v", o, sp, err)
	}
	tt, err := f.ServerTest(true, sp, 5001)
	if err != nil || tt.Proto != "udp" || tt.Port != 5001 || tt.Duration != 10*time.Second || tt.RateBPS != 20e6 || tt.Length != 1470 || tt.Peer != "" {
		t.Errorf("ServerTest: %+v, %v", tt, err)
	}
	for _, c := range []struct {
		f    Flags
		want string
	}{
		{Flags{Spec: "telnet:h", Shell: "nosuch", StepTimeout: 1, ReportTimeout: 1}, "invalid --dut-shell"},
		{Flags{Spec: "telnet:h", Shell: "auto", StepTimeout: 0, ReportTimeout: 1}, "invalid --dut-timeout"},
		{Flags{Spec: "telnet:h", Shell: "auto", StepTimeout: 1, ReportTimeout: 4000}, "invalid --dut-report-timeout"},
	} {
		if _, _, err := c.f.Options(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.f, err, c.want)
		}
	}
	serial, err := ParseSpec("serial:/dev/ttyUSB0")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    Flags
		sp   Spec
		want string
	}{
		{Flags{Time: 0, Rate: "1M"}, sp, "invalid --dut-time"},
		{Flags{Time: 1, Rate: "10pps"}, sp, "invalid --dut-rate"},
		{Flags{Time: 1, Rate: "1M", Len: "70000"}, sp, "invalid --dut-len"},
		{Flags{Time: 1, Rate: "1M"}, serial, "--dut-peer ADDR is needed"},
	} {
		if _, err := c.f.ServerTest(false, c.sp, 5001); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.f, err, c.want)
		}
	}
}
