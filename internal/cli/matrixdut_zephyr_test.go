//go:build linux || darwin

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/testutil/zshell"
)

// startZShell runs the stand-in Zephyr shell on a pty for the test.
func startZShell(t *testing.T, ctx context.Context, o zshell.Options) string {
	t.Helper()
	_, spec, closeSh, err := zshell.StartPTY(ctx, o)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	t.Cleanup(closeSh)
	return spec
}

// TestMatrixDUTZephyrSyntaxes: the four-cell matrix through the stand-in
// Zephyr shell of each zperf syntax in use, over a pty with a real board's
// terminal behaviour (colours, prompt redraws around asynchronous output,
// log lines, the IPv6-first note): 4 cells ok, each with the device's
// figures beside ours, UDP within 1 % of each other.
func TestMatrixDUTZephyrSyntaxes(t *testing.T) {
	for _, v := range []struct {
		name, version string
		iperf3        bool // a zperf built for iperf3, named by --dut-shell zephyr-iperf3
	}{{"2.7.6", "2.7.6", false}, {"3.4.0", "3.4.0", false}, {"4.3.0", "4.3.0", false}, {"4.3.0-iperf3", "4.3.0", true}} {
		version := v.version
		t.Run(v.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			spec := startZShell(t, ctx, zshell.Options{Version: version, Iperf3: v.iperf3})
			port := freeLoopbackPort(t)
			args := []string{"matrix", "127.0.0.1", "-p", fmt.Sprint(port), "-t", "2", "-b", "2M", "-l", "1000",
				"--dut", spec, "--dut-peer", "127.0.0.1", "--dut-timeout", "10"}
			if v.iperf3 {
				args = append(args, "--dut-shell", "zephyr-iperf3")
			}
			var out, errb bytes.Buffer
			code := run(ctx, append(args, "--json"), &out, &errb)
			var m result.Matrix
			if err := json.Unmarshal(out.Bytes(), &m); err != nil {
				t.Fatalf("exit %d, %v: %s\n%s", code, err, errb.String(), out.String())
			}
			if code != exitOK || len(m.Cells) != 4 {
				t.Fatalf("exit %d, %d cells: %s\n%s", code, len(m.Cells), errb.String(), cellsOf(m))
			}
			for _, c := range m.Cells {
				d := c.Device
				if c.Status != matrix.StatusOK || d == nil || d.Error != "" || d.BitsPerSecond == nil || c.BitsPerSecond == nil {
					t.Fatalf("%s: %s %s, device %+v\n%s", c.Name(), c.Status, c.Reason, d, cellsOf(m))
				}
				if want := "Zephyr " + version; !strings.HasPrefix(d.Firmware, want) {
					t.Errorf("%s: firmware %q, want %s…", c.Name(), d.Firmware, want)
				}
				if v.iperf3 && (!strings.Contains(d.Firmware, "iperf3 mode") || c.Result.Test.Dialect != "iperf3") {
					t.Errorf("%s: firmware %q, our side's dialect %q; want the iperf3 mode and dialect", c.Name(), d.Firmware, c.Result.Test.Dialect)
				}
				dev, ours := *d.BitsPerSecond, *c.BitsPerSecond
				t.Logf("%s: device %.0f bit/s over %v s, wirebench %.0f bit/s: %+.2f %%", c.Name(), dev, ptr(d.Seconds), ours, (dev-ours)/ours*100)
				if c.Protocol != result.UDP {
					continue
				}
				if err := udpAgree(c, d); err != nil {
					t.Errorf("%s: %v", c.Name(), err)
				}
			}
			// The text output puts each cell's device figures beside ours.
			out.Reset()
			errb.Reset()
			if code := run(ctx, args, &out, &errb); code != exitOK {
				t.Fatalf("text run: exit %d: %s\n%s", code, errb.String(), out.String())
			}
			for _, want := range []string{"udp upload:\n[dut] zephyr    (server) reported ", "udp download:\n[dut] zephyr    (client) reported ", "[dut] wirebench  (receiver) ", "[dut] difference device − wirebench: "} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("no %q in the text output:\n%s", want, out.String())
				}
			}
			if testing.Verbose() {
				t.Logf("text output:\n%s", out.String())
			}
		})
	}
}

// udpAgree checks a UDP cell's device and wirebench rates agree within
// 1 %, unless the two sides' clocks measured durations that differ (a
// loaded machine): then the bytes each rate stands for must agree instead,
// within 1 % and the last digit the device printed.
func udpAgree(c result.MatrixCell, d *result.Device) error {
	dev, ours := *d.BitsPerSecond, *c.BitsPerSecond
	if math.Abs(dev-ours) <= 0.01*ours {
		return nil
	}
	secs := 0.0
	if r := c.Result; r != nil && c.Direction == result.MatrixUpload && r.Sender != nil {
		secs = r.Sender.Seconds
	} else if r != nil && r.Receiver != nil {
		secs = r.Receiver.Seconds
	}
	if secs <= 0 || d.Seconds == nil {
		return fmt.Errorf("rates %.0f (device) and %.0f (wirebench) differ by more than 1 %%, and no durations to tell why", dev, ours)
	}
	devBytes, ourBytes := dev**d.Seconds/8, ours*secs/8
	// zperf truncates both figures to two decimals of its unit (10 kbit/s
	// at 2 Mbit/s, 10 ms): allow their last digit besides the 1 %.
	if slack := 0.01 + 1e4/dev + 0.01/(*d.Seconds); math.Abs(devBytes-ourBytes) > slack*ourBytes {
		return fmt.Errorf("rates %.0f and %.0f bit/s differ by more than 1 %%, and so do the bytes they stand for (%.0f over %.3f s, %.0f over %.3f s)",
			dev, ours, devBytes, *d.Seconds, ourBytes, secs)
	}
	return nil
}

func ptr(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func cellsOf(m result.Matrix) string {
	var b strings.Builder
	for _, c := range m.Cells {
		fmt.Fprintf(&b, "%s: %s %s\n", c.Name(), c.Status, c.Reason)
		if c.Device != nil {
			b.WriteString(strings.Join(c.Device.Transcript, "\n") + "\n")
		}
	}
	return b.String()
}

// A shell that answers "zperf: command not found": every cell fails at
// once, quoting it, with no Go internals in the reason.
func TestMatrixDUTCommandNotFound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	spec := startZShell(t, ctx, zshell.Options{Version: "3.4.0", NoZperf: true})
	port := freeLoopbackPort(t)
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{"matrix", "127.0.0.1", "-p", fmt.Sprint(port), "-t", "2", "-b", "2M", "--dut", spec, "--dut-peer", "127.0.0.1",
		"--dut-timeout", "10", "--json"}, &out, &errb)
	el := time.Since(start)
	var m result.Matrix
	if err := json.Unmarshal(out.Bytes(), &m); err != nil || code == exitOK || len(m.Cells) != 4 {
		t.Fatalf("exit %d, %v: %s\n%s", code, err, errb.String(), out.String())
	}
	for _, c := range m.Cells {
		if c.Status != matrix.StatusFailed || !strings.Contains(c.Reason, `"zperf: command not found"`) || strings.Contains(c.Reason, "context") {
			t.Errorf("%s: %s %q; want failed, quoting the shell", c.Name(), c.Status, c.Reason)
		}
		t.Logf("%s: %s", c.Name(), c.Reason)
	}
	// Each cell fails within a second (the product's promise; the dut
	// package's TestZephyrCommandNotFound times one step). Here the bound
	// is one 10 s step timeout for all four beyond the matrix's 1 s pauses
	// between cells: load cannot reach it by accident, a cell waiting for
	// a timeout would.
	pauses := 3 * matrix.DefaultPause
	if el-pauses > 10*time.Second {
		t.Errorf("4 failing cells took %v (%v of it pauses between cells)", el, pauses)
	}
	t.Logf("4 cells failed in %v, %v of it the pauses between cells", el.Round(time.Millisecond), pauses)
}
