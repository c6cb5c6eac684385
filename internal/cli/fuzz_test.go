package cli

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/iperfargs"
	"github.com/wirebench/wirebench/internal/session"
)

// splitArgs turns one fuzz string into an argument list (NUL-separated).
func splitArgs(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

// FuzzIperfArgs: the iperf-style rewriting (-s, -c HOST, grouped shorts,
// --client=HOST, optional values) never panics, leaves a command line that
// starts with a subcommand alone, turns one that asks for the version
// (-v, --version) into "version" alone, and any other iperf-style one into
// the client or server subcommand without losing or inventing arguments.
func FuzzIperfArgs(f *testing.F) {
	for _, s := range []string{"-s", "-c\x0010.0.0.1\x00-u", "-uc10.0.0.1", "-uc", "--client=h", "-su", "client\x00h\x00--latency\x00icmp",
		"-c", "--\x00-s", "-Rrc\x00h", "\x00-c", "-v", "-s\x00--version", "-c\x00h\x00--\x00-v"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in := splitArgs(s)
		out := iperfargs.Rewrite(append([]string(nil), in...))
		if len(in) > 0 && !strings.HasPrefix(in[0], "-") && in[0] != "" {
			if strings.Join(out, "\x00") != s {
				t.Fatalf("a subcommand line was rewritten: %q -> %q", in, out)
			}
		} else if len(out) > 0 && strings.Join(out, "\x00") != s {
			if asksVersion(in) {
				if len(out) != 1 || out[0] != "version" {
					t.Fatalf("%q asks for the version (-v, --version), rewritten to %q", in, out)
				}
				return
			}
			if out[0] != "client" && out[0] != "server" {
				t.Fatalf("rewritten to %q from %q", out, in)
			}
			if len(strings.Join(out[1:], "")) > len(strings.Join(in, "")) {
				t.Fatalf("rewriting %q invented bytes: %q", in, out)
			}
		}
		joined := joinOptionalValues(out)
		if len(joined) > len(out) {
			t.Fatalf("joining %q gave more arguments: %q", out, joined)
		}
	})
}

// asksVersion says whether an iperf-style line asks for the version: -v
// or --version before any "--", as iperf 2 and iperf3 read them.
func asksVersion(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-v" || a == "--version" {
			return true
		}
	}
	return false
}

// FuzzClientFlags parses arbitrary client flag lines the way the client
// subcommand does, and builds the test configuration from them, without
// running anything: malformed values are errors, never panics.
func FuzzClientFlags(f *testing.F) {
	for _, s := range []string{"-u\x00-b\x00100M\x00-l\x0064", "-t\x001e300", "-n\x0010M\x00-P\x000", "-i\x00NaN", "-b\x008000pps",
		"-l\x009999999G", "--medium\x00custom:1,0\x00-u", "-r\x00-L\x005002", "--latency=icmp", "-p\x005201\x00--bidir"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := &env{ctx: context.Background(), stdout: &errWriter{w: io.Discard}, stderr: io.Discard}
		cmd, fl := newClientCmdFlags(e)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.ParseFlags(joinOptionalValues(splitArgs(s))); err != nil {
			return
		}
		cfg, err := fl.config(cmd, "127.0.0.1")
		if err != nil {
			return
		}
		if cfg.Parallel < 1 || cfg.Duration < 0 || cfg.Bytes < 0 || cfg.Length < 0 || cfg.Interval < 0 {
			t.Fatalf("flags %q gave %+v", splitArgs(s), cfg)
		}
		if _, err := fl.linkFlags.resolve(); err == nil {
			_ = session.PreviewTest(cfg)
		}
	})
}
