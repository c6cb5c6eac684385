package cli

// `lab up --model`: its flags and how its relays are shown. The relays
// themselves, one per port in the lab's middle host r, are labctl's. See
// docs/lab-hosts.md.

import (
	"fmt"
	"os"
)

// selfArgv returns the command line that runs this wirebench binary with
// args: labctl.Up starts the relays and the exact wire with it. The lab
// tests replace it: their wirebench is the test binary.
var selfArgv = func(args ...string) ([]string, error) {
	p, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding wirebench's own binary: %w", err)
	}
	return append([]string{p}, args...), nil
}
