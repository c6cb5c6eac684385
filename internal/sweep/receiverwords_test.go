package sweep_test

import (
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/hostdrops"
	"github.com/wirebench/wirebench/internal/sweep/findings"
)

// TestLocalReceiverWordsMatch ties the findings' words to the warning a
// trial's session gives (hostdrops): the two packages share a floor and
// cannot import each other.
func TestLocalReceiverWordsMatch(t *testing.T) {
	d := hostdrops.Delta(hostdrops.Counters{RcvbufOK: true}, hostdrops.Counters{RcvbufErrors: 5, RcvbufOK: true})
	if w := d.ReceiverOverflow(5); !strings.HasPrefix(w, findings.LocalReceiverWords) {
		t.Errorf("the session's warning %q does not begin with the findings' %q", w, findings.LocalReceiverWords)
	}
}
