package session

import (
	"strings"
	"testing"
)

// TestDroppedDatagrams: a socket's drop count is datagrams without receive
// offload, and a lower bound (packets of coalesced datagrams) with it.
func TestDroppedDatagrams(t *testing.T) {
	if got := DroppedDatagrams(12, false); got != "12 datagrams" {
		t.Errorf("without offload: %q", got)
	}
	if got := DroppedDatagrams(12, true); !strings.HasPrefix(got, "at least 12 datagrams (12 packets") {
		t.Errorf("with offload: %q", got)
	}
}
