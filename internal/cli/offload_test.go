package cli

import (
	"context"
	"io"
	"testing"
)

// TestOffloadFlags: --no-gso and --no-gro reach the client's test
// configuration (the server's is built from the same offloadFlags), and -b
// in bit/s at the 1 GbE minimum-frame rate asks for the same datagram rate
// as -b in pps.
func TestOffloadFlags(t *testing.T) {
	cases := []struct {
		args         []string
		noGSO, noGRO bool
	}{
		{[]string{"-u"}, false, false},
		{[]string{"-u", "--no-gso"}, true, false},
		{[]string{"-u", "--no-gro"}, false, true},
		{[]string{"-u", "--no-gso", "--no-gro"}, true, true},
	}
	for _, tc := range cases {
		e := &env{ctx: context.Background(), stdout: &errWriter{w: io.Discard}, stderr: io.Discard}
		cmd, fl := newClientCmdFlags(e)
		if err := cmd.ParseFlags(tc.args); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		cfg, err := fl.config(cmd, "127.0.0.1")
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if cfg.NoGSO != tc.noGSO || cfg.NoGRO != tc.noGRO {
			t.Errorf("%q: NoGSO %v NoGRO %v, want %v %v", tc.args, cfg.NoGSO, cfg.NoGRO, tc.noGSO, tc.noGRO)
		}
	}
	var pps [2]float64
	for i, args := range [][]string{{"-u", "-l", "18", "-b", "1488095pps"}, {"-u", "-l", "18", "-b", "214285680"}} {
		e := &env{ctx: context.Background(), stdout: &errWriter{w: io.Discard}, stderr: io.Discard}
		cmd, fl := newClientCmdFlags(e)
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		cfg, err := fl.config(cmd, "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		pps[i] = cfg.Rate.Value
		if !cfg.Rate.PPS {
			pps[i] /= float64(cfg.Length * 8)
		}
	}
	if pps[0] != 1488095 || pps[1] != 1488095 {
		t.Errorf("-b 1488095pps and -b 214285680 at -l 18 ask for %v datagrams/s, want 1488095 each", pps)
	}
}
