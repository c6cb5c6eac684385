//go:build !linux

package cli

import "io"

// readPassword has no echo-free prompt off Linux: the password comes from
// IPERF3_PASSWORD.
func readPassword(io.Writer) (string, error) { return "", errNoPassword }
