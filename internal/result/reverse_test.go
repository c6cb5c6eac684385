package result

import (
	"slices"
	"testing"
)

// A reverse flow's warnings join the test's and stay on the flow, a copy
// of their own; a flow that never came leaves them on the test alone.
func TestAddReverseKeepsTheFlowsWarnings(t *testing.T) {
	r := New("client")
	r.Warn("forward")
	back := []string{"connect-back stream: reset"}
	f := &Flow{Direction: DirReceive}
	r.AddReverse(f, back)
	back[0] = "changed later"
	if r.Reverse != f || !slices.Equal(f.Warnings, []string{"connect-back stream: reset"}) ||
		!slices.Equal(r.Warnings, []string{"forward", "connect-back stream: reset"}) {
		t.Errorf("reverse %+v, warnings %q", r.Reverse, r.Warnings)
	}
	none := New("client")
	none.AddReverse(nil, []string{"the server never connected back"})
	if none.Reverse != nil || !slices.Equal(none.Warnings, []string{"the server never connected back"}) {
		t.Errorf("no flow: reverse %+v, warnings %q", none.Reverse, none.Warnings)
	}
}
