package diagnose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/dut"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/testutil/zshell"
)

// freeUDPPort is a loopback port no one listens on now.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// TestDeviceFrameRateLimit diagnoses a board through its own shell
// (`diagnose --dut`): the stand-in Zephyr shell on a pty, whose zperf
// server takes at most 2,000 datagrams per second. Every UDP run starts
// the board's server through its shell; the diagnosis finds the frame-rate
// limit, compares the upload (the board receives) with the download (the
// board's zperf client sends to our server at --dut-peer), runs TCP to the
// board's TCP server, keeps the shell's transcript, and says what a shell
// cannot show.
func TestDeviceFrameRateLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("a diagnosis through a device shell takes tens of seconds; skipped with -short")
	}
	const limit = 2000.0
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, spec, closeSh, err := zshell.StartPTY(ctx, zshell.Options{Version: "3.4.0", FramesPerSecond: limit})
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer closeSh()
	tr := filepath.Join(t.TempDir(), "dut.txt")
	cmd := NewCommand(func(err error) error { return err })
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs([]string{"127.0.0.1", "-p", fmt.Sprint(freeUDPPort(t)), "--sizes", "256,1024,1470", "--max-rate", "5000pps",
		"--trial", "1s", "--low-rate", "0", "--big-size", "0", "--gap", "100ms", "--budget", "150s",
		"--dut", spec, "--dut-shell", "zephyr", "--dut-peer", "127.0.0.1", "--dut-timeout", "2", "--dut-report-timeout", "3",
		"--dut-transcript", tr, "--json", "--no-save"})
	start := time.Now()
	err = cmd.ExecuteContext(ctx)
	t.Logf("diagnose --dut took %v\n%s", time.Since(start), errb.String())
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var doc result.Diagnosis
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	t.Logf("verdict: %s", doc.Verdict)
	for _, f := range doc.Findings {
		t.Logf("%s %s %v runs %v", f.Kind, f.Confidence, f.Figures, f.EvidenceRuns)
	}
	for _, r := range doc.Runs {
		t.Logf("run %d %s %d B: asked %.0f/s, sent %.0f/s, delivered %.0f/s, %.1f %% lost, %.2f Mbit/s", r.ID, r.Purpose, r.Size, r.AskedPPS, r.SentPPS, r.DeliveredPPS, r.LossPercent, r.BitsPerSecond/1e6)
	}
	for _, m := range bound(&doc, result.FindingFrameRate, "frames_per_second", 0.96*limit, 1.04*limit) {
		t.Error(m)
	}
	for _, m := range none(&doc, result.FindingByteRate) {
		t.Error(m)
	}
	dir := finding(t, &doc, result.FindingDirection)
	// The board drops what it receives above its limit; what it sends is
	// not limited. The upload cannot carry more than the limit's bits.
	if up := dir.Figures["upload_bits_per_second"]; up <= 0 || up > 1.04*limit*1470*8 || dir.Figures["download_bits_per_second"] <= 0 {
		t.Errorf("direction %v: want an upload within the limit's %.2f Mbit/s and a download", dir.Figures, limit*1470*8/1e6)
	}
	if doc.Test.DUT != spec || doc.Device == nil || doc.Device.Shell != "zephyr" || doc.Device.Error != "" || len(doc.Device.Transcript) == 0 {
		t.Errorf("test %+v, device %+v: want the --dut line and the zephyr session's transcript", doc.Test, doc.Device)
	}
	if b, err := os.ReadFile(tr); err != nil || !strings.Contains(string(b), "zperf udp download") {
		t.Errorf("--dut-transcript: %v, %d bytes without a zperf udp download", err, len(b))
	}
	if !strings.Contains(strings.Join(doc.CannotTell, "\n"), "a device's shell times no round trips") {
		t.Errorf("cannot tell %q: want the queue a shell cannot time", doc.CannotTell)
	}
	if last := doc.Runs[len(doc.Runs)-1]; last.Purpose != result.DiagnoseTCP || last.BitsPerSecond <= 0 {
		t.Errorf("last run %+v, want a TCP run to the board's TCP server", last)
	}
}

// --dut refuses a reflector as the far end: the device's server is
// started for every run.
func TestDeviceRefusesReflect(t *testing.T) {
	o := Options{Port: 5001, Mode: "reflect", Medium: "eth1g", Sizes: "512", MaxRate: DefaultMaxRate, Trial: "1s",
		LowRate: "0", Budget: "1m"}
	o.DUT.Spec, o.DUT.Shell, o.DUT.StepTimeout, o.DUT.ReportTimeout = "telnet:127.0.0.1:1", "zephyr", 1, 1
	if _, err := o.Setup("127.0.0.1"); err == nil || !strings.Contains(err.Error(), "not reflect") {
		t.Errorf("error %v, want --dut refusing --mode reflect", err)
	}
	o.Mode, o.DUT.Shell = "wirebench", "no-such-shell"
	if _, err := o.Setup("127.0.0.1"); err == nil || !strings.Contains(err.Error(), "--dut-shell") {
		t.Errorf("error %v, want an unknown --dut-shell refused", err)
	}
	o.DUT.Spec = ""
	if _, err := o.Setup("127.0.0.1"); err == nil || !strings.Contains(err.Error(), "--dut-shell") {
		t.Errorf("error %v, want an unknown --dut-shell refused without --dut too", err)
	}
	o.DUT = dut.Flags{}
	if s, err := o.Setup("127.0.0.1"); err != nil || s.dev != nil {
		t.Errorf("no --dut flags: %v, device %v", err, s)
	}
}
