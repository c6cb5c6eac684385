package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestRewriteIperfArgs(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"-s"}, []string{"server"}},
		{[]string{"-s", "-u", "-i", "1"}, []string{"server", "-u", "-i", "1"}},
		{[]string{"-su"}, []string{"server", "-u"}},
		{[]string{"-c", "10.0.0.1", "-u", "-b", "100M"}, []string{"client", "10.0.0.1", "-u", "-b", "100M"}},
		{[]string{"-u", "-c", "h", "-t", "60"}, []string{"client", "h", "-u", "-t", "60"}},
		{[]string{"-c10.0.0.1", "-u"}, []string{"client", "10.0.0.1", "-u"}},
		{[]string{"-uR", "-c10.0.0.1", "-b100M"}, []string{"client", "10.0.0.1", "-uR", "-b100M"}},
		{[]string{"-uc", "h"}, []string{"client", "h", "-u"}},
		{[]string{"-uc10.0.0.1"}, []string{"client", "10.0.0.1", "-u"}},
		{[]string{"--client", "h", "-u"}, []string{"client", "h", "-u"}},
		{[]string{"--client=h"}, []string{"client", "h"}},
		{[]string{"--server", "-p", "5002"}, []string{"server", "-p", "5002"}},
		{[]string{"client", "h", "-c", "x"}, []string{"client", "h", "-c", "x"}},
		{[]string{"calc", "--medium", "eth100"}, []string{"calc", "--medium", "eth100"}},
		{[]string{"--help"}, []string{"--help"}},
		{nil, nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.in, " "), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, rewriteIperfArgs(tt.in)); diff != "" {
				t.Errorf("rewrite(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestJoinOptionalValues(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"client", "h", "--latency", "icmp"}, []string{"client", "h", "--latency=icmp"}},
		{[]string{"client", "h", "--latency", "udp", "-t", "2"}, []string{"client", "h", "--latency=udp", "-t", "2"}},
		{[]string{"client", "h", "--latency", "-t", "2"}, []string{"client", "h", "--latency", "-t", "2"}},
		{[]string{"client", "--latency", "h"}, []string{"client", "--latency", "h"}}, // h is the host
		{[]string{"client", "h", "--latency=icmp"}, []string{"client", "h", "--latency=icmp"}},
		{[]string{"client", "h", "--", "--latency", "icmp"}, []string{"client", "h", "--", "--latency", "icmp"}},
		{[]string{"client", "h", "--latency"}, []string{"client", "h", "--latency"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.in, " "), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, joinOptionalValues(tt.in)); diff != "" {
				t.Errorf("join(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestUsageErrors checks that malformed command lines give one clear line
// on stderr and exit code 2, without touching the network.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"client", "127.0.0.1", "-u", "-b", "fast"}, "invalid rate"},
		{[]string{"client", "127.0.0.1", "-b", "10M"}, "add -u"},
		{[]string{"client", "127.0.0.1", "-t", "-1"}, "invalid duration"},
		{[]string{"client", "127.0.0.1", "-n", "lots"}, "invalid byte count"},
		{[]string{"client", "127.0.0.1", "-l", "1.5"}, "invalid size"},
		{[]string{"client", "127.0.0.1", "-u", "-l", "8"}, "out of range"},
		{[]string{"client", "127.0.0.1", "-P", "0"}, "invalid -P 0"},
		{[]string{"client", "127.0.0.1", "-p", "70000"}, "port"},
		{[]string{"client", "127.0.0.1", "--dialect", "iperf9"}, "unknown dialect"},
		{[]string{"client", "127.0.0.1", "-R", "-d"}, "at most one"},
		{[]string{"client", "127.0.0.1", "-R", "--dialect", "iperf2-legacy"}, "need the iperf2"},
		{[]string{"client", "127.0.0.1", "-L", "5002"}, "add -r or -d"},
		{[]string{"client", "127.0.0.1", "--json", "--csv"}, "choose one"},
		{[]string{"client", "127.0.0.1", "--medium", "eth7"}, "medium"},
		{[]string{"client"}, "expected one HOST"},
		{[]string{"client", "127.0.0.1", "--frobnicate"}, "unknown flag"},
		{[]string{"-c", "127.0.0.1", "-x"}, "unknown shorthand flag"},
		{[]string{"server", "--idle-timeout", "-3"}, "invalid --idle-timeout"},
		{[]string{"server", "extra"}, "expected no arguments"},
		{[]string{"server", "-p", "99999"}, "invalid port"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errb)
			if code != exitUsage {
				t.Fatalf("exit code %d, want %d; stderr %q", code, exitUsage, errb.String())
			}
			msg := errb.String()
			if !strings.Contains(msg, tt.want) || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
				t.Errorf("stderr %q: want one line containing %q", msg, tt.want)
			}
		})
	}
}

// TestUnreachablePeer: a client whose server does not answer fails with
// exit code 1 and says what it was doing.
func TestUnreachablePeer(t *testing.T) {
	var out, errb bytes.Buffer
	// Port 9 (discard) on loopback: nothing listens there in the test.
	code := run(context.Background(), []string{"client", "127.0.0.1", "-p", "9", "-t", "1"}, &out, &errb)
	if code != exitFailure || !strings.Contains(errb.String(), "connecting to 127.0.0.1:9") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	code = run(context.Background(), []string{"client", "127.0.0.1", "-p", "9", "-u", "-t", "1", "-b", "1M"}, &out, &errb)
	if code != exitFailure || !strings.Contains(errb.String(), "refused") {
		t.Fatalf("udp: exit %d, stderr %q", code, errb.String())
	}
}

// fullDisk fails every write, like stdout redirected to /dev/full.
type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestOutputWriteFailure: output that could not be written is an error
// (exit 1, said once on stderr), never a silent success.
func TestOutputWriteFailure(t *testing.T) {
	for _, args := range [][]string{
		{"version"},
		{"calc", "--medium", "eth100", "--proto", "udp", "--payload", "1470"},
		{"calc", "--medium", "eth100", "--proto", "udp", "--payload", "1470", "--json"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var errb bytes.Buffer
			if code := run(context.Background(), args, fullDisk{}, &errb); code != exitFailure {
				t.Errorf("exit %d, want %d; stderr %q", code, exitFailure, errb.String())
			}
			if n := strings.Count(errb.String(), "\n"); n != 1 || !strings.Contains(errb.String(), "no space left on device") {
				t.Errorf("stderr %q, want one line naming the write error", errb.String())
			}
		})
	}
}

// TestFlagValueNames checks every flag's help line: pflag takes a
// backquoted word in the usage as the value's name, so a backquoted phrase
// (a command, a path) would show up as the name of the value.
func TestFlagValueNames(t *testing.T) {
	root := newRootCmd(&env{stdout: io.Discard, stderr: io.Discard})
	for _, c := range root.Commands() {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(f)
			if strings.ContainsAny(name, " -") {
				t.Errorf("%s --%s: value name %q (a backquoted phrase in its usage)", c.Name(), f.Name, name)
			}
		})
	}
	help := new(bytes.Buffer)
	if code := run(context.Background(), []string{"client", "--help"}, help, io.Discard); code != 0 {
		t.Fatalf("client --help: exit %d", code)
	}
	if !strings.Contains(help.String(), "--medium NAME") {
		t.Errorf("client --help does not show --medium NAME:\n%s", help.String())
	}
}
