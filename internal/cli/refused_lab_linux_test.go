//go:build linux

package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/netlab"
)

// TestUDPBytesSendThroughRefusingFirewallEnds runs `client -u -n` from lab
// host A to B while A's firewall (nftables, else iptables) drops every UDP
// datagram to B's port on the way out, so that each sendmsg fails with
// EPERM. The client must end by itself with an error that says every
// datagram was refused and why; before, a send bounded by a byte count
// went on until it was interrupted, because a refused datagram adds no
// bytes. The 60 s context only bounds a hang; the time the client took is
// logged (measured here: about 1 s, engine.RefusedFor).
func TestUDPBytesSendThroughRefusingFirewallEnds(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to build network namespaces and firewall rules")
	}
	if err := netlab.Available(); err != nil {
		t.Skipf("no lab: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lab, err := netlab.New(ctx, netlab.Config{Name: "refused"})
	if err != nil {
		t.Fatalf("creating lab: %v", err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Errorf("closing lab: %v", err)
		}
	})
	host := lab.B.Addr.String()
	dropUDPOut(ctx, t, lab.A, host, "5001")

	var out, errb bytes.Buffer
	code := -1
	start := time.Now()
	args := []string{"client", host, "-p", "5001", "-u", "-b", "10M", "-n", "1G", "--dialect", "iperf2"}
	if err := lab.A.Do(func() error { code = run(ctx, args, &out, &errb); return nil }); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("client ended after %v with exit %d\nstdout: %s\nstderr: %s", took, code, out.String(), errb.String())
	if ctx.Err() != nil {
		t.Fatalf("the client ran until the test's context ended (%v)", took)
	}
	all := out.String() + errb.String()
	if code != exitFailure || !strings.Contains(all, "refused every datagram") || !strings.Contains(all, "operation not permitted") {
		t.Errorf("exit %d; want %d and an error saying every datagram was refused with EPERM", code, exitFailure)
	}
}

// dropUDPOut makes h's firewall drop every UDP datagram it sends to
// addr:port, with nftables when nft is installed, else iptables; the test
// is skipped when neither is.
func dropUDPOut(ctx context.Context, t *testing.T, h *netlab.Host, addr, port string) {
	t.Helper()
	var cmds [][]string
	switch {
	case lookPath("nft"):
		cmds = [][]string{
			{"nft", "add", "table", "inet", "wbtest"},
			{"nft", "add", "chain", "inet", "wbtest", "out", "{ type filter hook output priority 0 ; }"},
			{"nft", "add", "rule", "inet", "wbtest", "out", "ip", "daddr", addr, "udp", "dport", port, "drop"},
		}
	case lookPath("iptables"):
		cmds = [][]string{{"iptables", "-A", "OUTPUT", "-d", addr, "-p", "udp", "--dport", port, "-j", "DROP"}}
	default:
		t.Skip("neither nft (nftables) nor iptables is installed")
	}
	for _, c := range cmds {
		if out, err := h.Command(ctx, c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s in %s: %v\n%s", strings.Join(c, " "), h.Name, err, out)
		}
	}
}

func lookPath(bin string) bool {
	_, err := exec.LookPath(bin)
	return err == nil
}
