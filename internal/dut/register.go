package dut

import (
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// Register declares the --dut flags on fs, into f, with the defaults and
// words every command that drives a device shares (docs/dut.md); server
// adds those of the test the device runs as client against our server
// (--dut-peer, --dut-time, --dut-rate, --dut-len).
func (f *Flags) Register(fs *pflag.FlagSet, server bool) {
	fs.StringVar(&f.Spec, "dut", "", "drive the device's own shell at `SPEC`: serial:DEVICE[?baud=N], telnet:HOST[:PORT], labgrid:PLACE[@HOST:PORT] or cmd:COMMAND (docs/dut.md)")
	fs.StringVar(&f.Shell, "dut-shell", "auto", "the device's shell `NAME`: "+strings.Join(Shells(), ", "))
	fs.StringVar(&f.Iface, "dut-iface", "", "the device's interface `IFACE` for the test (Harmony: defnet IFACE)")
	fs.Float64Var(&f.StepTimeout, "dut-timeout", DefaultStepTimeout.Seconds(), "`SECONDS` each step with the device's shell may take (prompt, command answer)")
	fs.Float64Var(&f.ReportTimeout, "dut-report-timeout", DefaultReportTimeout.Seconds(), "`SECONDS` the device may take to print its report after the test")
	fs.StringVar(&f.Transcript, "dut-transcript", "", "also write the session with the device's shell to `FILE` (it is in --json as device.transcript)")
	if server {
		f.RegisterPeer(fs, "our address `ADDR` the device connects to (default: the source address of the route to the telnet host; needed for serial and cmd)")
		fs.Float64Var(&f.Time, "dut-time", 10, "`SECONDS` the device sends for")
		fs.StringVar(&f.Rate, "dut-rate", "1M", "UDP `RATE` the device sends at, bit/s with k/M/G")
		fs.StringVar(&f.Len, "dut-len", "", "datagram or write size the device uses, in `BYTES` (default: the firmware's)")
	}
}

// RegisterPeer declares --dut-peer alone, with usage saying what the
// command uses it for (a matrix's download cells, a diagnosis's download
// run): the device sends to our address there.
func (f *Flags) RegisterPeer(fs *pflag.FlagSet, usage string) {
	fs.StringVar(&f.Peer, "dut-peer", "", usage)
}

// Enabled says whether --dut was given.
func (f Flags) Enabled() bool { return f.Spec != "" }

// WriteTranscript writes lines to --dut-transcript, when it was given.
func (f Flags) WriteTranscript(lines []string) error {
	if f.Transcript == "" {
		return nil
	}
	return os.WriteFile(f.Transcript, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
