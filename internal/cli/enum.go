package cli

import (
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/units"
)

// enumFlag checks a flag whose value comes from a fixed set: any other
// value is a usage error (exit code 2) that names the flag and lists the
// values it takes, as "invalid --mode \"tcp\": want one of reflect,
// wirebench, iperf2". flag is written as on the command line ("--mode",
// "-f").
func enumFlag(flag, value string, valid ...string) error {
	if slices.Contains(valid, value) {
		return nil
	}
	return usagef("invalid %s %q: want one of %s", flag, value, strings.Join(valid, ", "))
}

// usage marks err, from a package checking typed options, as a usage
// error; nil stays nil.
func usage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// seconds is units.Seconds with a usage error.
func seconds(name string, v float64) (time.Duration, error) {
	d, err := units.Seconds(name, v)
	return d, usage(err)
}

// intervalSeconds is units.ReportInterval with a usage error.
func intervalSeconds(v float64) (time.Duration, error) {
	d, err := units.ReportInterval(v)
	return d, usage(err)
}
