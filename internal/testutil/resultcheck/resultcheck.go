// Package resultcheck holds the checks tests of several dialects make on a
// result: which warnings it carries, and what a TCP sender's peer must
// have received.
package resultcheck

import (
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// HasWarning reports whether one of r's warnings contains sub.
func HasWarning(r *result.Result, sub string) bool {
	for _, w := range r.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// SentTCP is what a TCP sender's peer must have received: the bytes it
// acknowledged, or, when the sender's wait for the last acknowledgements
// ended first (a peer or a machine too busy to read within the wait), the
// bytes written, which the peer still reads to the end; r must then say
// that its sender figure counts only the acknowledged ones.
func SentTCP(t testing.TB, r *result.Result, s *result.Sender) int64 {
	t.Helper()
	if s == nil {
		t.Fatalf("no sender figure in %+v", r)
	}
	if s.BytesWritten <= s.Bytes {
		return s.Bytes
	}
	t.Logf("the sender's wait for acknowledgements ended first: %d of %d bytes written acknowledged", s.Bytes, s.BytesWritten)
	if !HasWarning(r, "the peer had acknowledged") {
		t.Errorf("the sender figure counts %d of %d bytes written, and no warning says so: %q", s.Bytes, s.BytesWritten, r.Warnings)
	}
	return s.BytesWritten
}
