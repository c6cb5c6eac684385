package cli

import (
	"slices"
	"strings"
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
