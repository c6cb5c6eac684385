package iperf2

import (
	"errors"
	"fmt"
)

// ErrShort is wrapped by every error caused by a message that is shorter than its flags or layout require.
var ErrShort = errors.New("iperf2: message too short")

// ErrNotReport is returned by ParseServerReport when neither report layout has the VERSION1 flag set.
var ErrNotReport = errors.New("iperf2: not a server report")

// ShortError reports which message was too short, how many bytes it needed and how many it had.
// It wraps ErrShort.
type ShortError struct {
	What string // the message being decoded, e.g. "client header"
	Need int    // bytes required by the flags/layout
	Have int    // bytes available
}

// Error implements error.
func (e *ShortError) Error() string {
	return fmt.Sprintf("iperf2: %s needs %d bytes, have %d", e.What, e.Need, e.Have)
}

// Unwrap returns ErrShort so that errors.Is(err, ErrShort) holds.
func (e *ShortError) Unwrap() error { return ErrShort }
