//go:build linux

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/netlab"
)

// noPermHelperEnv makes TestPingNoICMPPermissionHelper run: it is the
// unprivileged child of TestPingNoICMPPermission.
const noPermHelperEnv = "WIREBENCH_TEST_NOPERM_HELPER"

// TestPingNoICMPPermission runs `wirebench ping` as user nobody in a lab
// namespace whose net.ipv4.ping_group_range admits no group, so that
// neither a raw nor an unprivileged ICMP socket is permitted: the command
// must fail with one error that names both refusals and what to change.
func TestPingNoICMPPermission(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a network namespace and drops to user nobody")
	}
	if err := netlab.Available(); err != nil {
		t.Skipf("no lab: %v", err)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed: cannot drop to user nobody")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lab, err := netlab.New(ctx, netlab.Config{Name: "pingperm"})
	if err != nil {
		t.Fatalf("creating lab: %v", err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Errorf("closing lab: %v", err)
		}
	})
	if out, err := lab.A.Command(ctx, "sysctl", "-w", "net.ipv4.ping_group_range=1 0").CombinedOutput(); err != nil {
		t.Fatalf("sysctl: %v\n%s", err, out)
	}
	bin := copyForNobody(t, os.Args[0])
	cmd := lab.A.Command(ctx, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
		bin, "-test.run=^TestPingNoICMPPermissionHelper$", "-test.v")
	cmd.Env = append(os.Environ(), noPermHelperEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	for _, want := range []string{
		"exit code 1\n",
		"wirebench: no ICMP socket permitted: raw socket: ",
		"operation not permitted; unprivileged ICMP socket: ",
		`(net.ipv4.ping_group_range is "1 0")`,
		"To ping, do one of: run as root; grant CAP_NET_RAW (sudo setcap cap_net_raw+ep",
		`sudo sysctl -w net.ipv4.ping_group_range="0 2147483647"`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("helper output lacks %q:\n%s", want, out)
		}
	}
	t.Logf("as nobody, ping_group_range \"1 0\":\n%s", out)
	if strings.Contains(string(out), "PING ") {
		t.Errorf("the PING header was printed for a run that could not open a socket:\n%s", out)
	}
	if n := strings.Count(string(out), "wirebench: "); n != 1 {
		t.Errorf("%d error lines, want one:\n%s", n, out)
	}
}

// TestPingNoICMPPermissionHelper is the child: it runs the ping command
// and prints its exit code and stderr.
func TestPingNoICMPPermissionHelper(t *testing.T) {
	if os.Getenv(noPermHelperEnv) != "1" {
		t.Skip("the unprivileged child of TestPingNoICMPPermission, not a test of its own")
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"ping", "-c", "1", "198.18.0.2"}, &stdout, &stderr)
	fmt.Printf("exit code %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
}

// copyForNobody copies the executable src into a directory every user may
// enter and returns the copy's path.
func copyForNobody(t *testing.T, src string) string {
	t.Helper()
	// t.TempDir is <tmp>/<test name><n>/<m>: open those two levels, not
	// the shared temporary directory above them.
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(dir, "wirebench-cli.test")
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}
