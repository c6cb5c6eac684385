package diagnose

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/dut"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/units"
)

// Options are what the diagnose command is asked, as typed: Setup checks
// them and builds the diagnosis. Every error Setup returns is a mistake in
// them.
type Options struct {
	Port                int
	Mode, Medium, Sizes string
	MaxRate, Trial, Gap string
	LowRate, Budget     string
	BigSize             int
	Labels              []string
	NoSave              bool
	DB                  string
	JSON, CSV           bool
	// DUT are the --dut flags: the device's own shell is the far end.
	DUT dut.Flags
}

// Defaults of the command.
const (
	DefaultSizes   = "256,512,1024,1470"
	DefaultMaxRate = "20000pps"
	DefaultTrial   = "500ms"
	DefaultLowRate = "2s"
	DefaultBudget  = "2m"
	DefaultBigSize = 8000
	// DefaultTCPLength is the TCP run's length against a server.
	DefaultTCPLength = 2 * time.Second
)

// Setup is a diagnosis built from Options.
type Setup struct {
	Config Config
	Test   result.DiagnosisTest
	Runner sweep.Runner
	// dev is the device's shell (--dut), opened by OpenDevice.
	dev *device
}

// Setup checks the options and builds the diagnosis of host.
func (o Options) Setup(host string) (*Setup, error) {
	if o.JSON && o.CSV {
		return nil, fmt.Errorf("choose one of --json and --csv")
	}
	so := sweep.Options{Port: o.Port, Sizes: o.Sizes, Mode: o.Mode, Loss: "0", Trial: o.Trial, Confirm: "0",
		Gap: o.Gap, MaxRate: o.MaxRate, Medium: o.Medium, Repeat: 1}
	ss, err := so.Setup(host)
	if err != nil {
		return nil, err
	}
	dev, err := o.checkDevice(so, ss)
	if err != nil {
		return nil, err
	}
	m, err := linerate.LookupMedium(o.Medium)
	if err != nil {
		return nil, fmt.Errorf("invalid --medium %q: %v", o.Medium, err)
	}
	rate, err := units.ParseRate(o.MaxRate)
	if err != nil || rate.Value <= 0 {
		return nil, fmt.Errorf("invalid --max-rate %q: want a rate like 20000pps or 100M", o.MaxRate)
	}
	maxPPS := rate.Value
	if !rate.PPS {
		// A bit rate is read at the largest size, the first run's.
		maxPPS /= float64(ss.Config.Sizes[len(ss.Config.Sizes)-1] * 8)
	}
	cfg := Config{Sizes: ss.Config.Sizes, BigSize: o.BigSize, Medium: m, MaxPPS: maxPPS, Trial: ss.Config.Trial,
		Gap: ss.Config.Gap, Overhead: time.Second}
	if cfg.LowRate, err = units.ParseDuration(o.LowRate); err != nil || cfg.LowRate < 0 {
		return nil, fmt.Errorf("invalid --low-rate %q: want a duration like 2s, or 0 for no loss floor run", o.LowRate)
	}
	if cfg.Budget, err = units.ParseDuration(o.Budget); err != nil || cfg.Budget < 0 {
		return nil, fmt.Errorf("invalid --budget %q: want a duration like 2m or 90s (0: none)", o.Budget)
	}
	if o.BigSize < 0 || o.BigSize > 65507 {
		return nil, fmt.Errorf("invalid --big-size %d: want 0 (none) or up to 65507 bytes", o.BigSize)
	}
	if run, ok := ss.Runner.(sweep.SessionRunner); ok {
		cfg.Overhead = 2 * time.Second // the server's report, the test's setup
		cfg.TCP = func(ctx context.Context, length time.Duration) (*result.Result, error) {
			c := run.Base
			c.UDP, c.Duration = false, length
			return dialect.RunClient(ctx, c)
		}
		cfg.TCPLength = DefaultTCPLength
		cfg.Direction = func(ctx context.Context, download bool, size int, pps float64, length time.Duration) (*result.Result, error) {
			c := run.Config(sweep.Spec{Size: size, RatePPS: pps, Duration: length})
			c.Reverse = download
			return dialect.RunClient(ctx, c)
		}
	}
	for _, l := range o.Labels {
		if strings.HasPrefix(l, "diagnose=") {
			return nil, fmt.Errorf("invalid --label %q: diagnose= is the label every run of a diagnosis gets", l)
		}
	}
	test := result.DiagnosisTest{Mode: o.Mode, Host: host, Port: o.Port, Medium: m.Name, BudgetS: cfg.Budget.Seconds(),
		MaxPPS: maxPPS, Sizes: cfg.Sizes}
	return &Setup{Config: cfg, Test: test, Runner: ss.Runner, dev: dev}, nil
}

// NewResult returns an empty document for test, ready to fill.
func NewResult(test result.DiagnosisTest) *result.Diagnosis {
	return &result.Diagnosis{Schema: result.Schema, Kind: result.KindDiagnosis, StartedAt: time.Now().UTC(), Test: test,
		Findings: []result.DiagnosisFinding{}, CannotTell: []string{}, Runs: []result.DiagnosisRun{}, Warnings: []string{}}
}
