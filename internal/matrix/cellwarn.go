package matrix

import "github.com/wirebench/wirebench/internal/result"

// ownWarnings are the warnings of r that are true of a cell's figures
// (before the cell is placed on the medium): the reverse flow's own for a
// cell taken from r.Reverse (a -r download: the forward test -r runs first
// fills no cell, so its warnings are no cell's), the rest for the cell of
// r's main flow. first says the cell is its test's first: the warnings the
// session could not give a flow go with it.
func ownWarnings(r *result.Result, dir string, first bool) []string {
	if r == nil {
		return nil
	}
	var rev []string
	if r.Reverse != nil {
		rev = r.Reverse.Warnings
	}
	switch {
	case fromReverse(r, dir) && r.Reverse != nil:
		return append([]string(nil), rev...)
	case !first:
		return nil
	}
	// The main flow's cell, or a reverse cell whose flow never came (it
	// failed: what the test says may be why).
	var out []string
	for _, w := range r.Warnings {
		if fromReverse(r, dir) || !contains(rev, w) {
			out = append(out, w)
		}
	}
	return out
}

// fromReverse says a cell of direction dir takes its figures from
// r.Reverse rather than r's main flow (as flowOf picks them).
func fromReverse(r *result.Result, dir string) bool {
	if r.Test.Mode == "full-duplex" {
		return false
	}
	main := result.MatrixUpload
	if r.Test.Direction == result.DirReceive {
		main = result.MatrixDownload
	}
	return dir != main
}

// flowView is r as if the cell's own flow (rcv, snd) were its only one, for
// placing the cell on the medium: the placement and its warnings are then
// about the cell's figures, and r keeps its own Link and warnings.
func flowView(r *result.Result, dir string, rcv *result.Receiver, snd *result.Sender) *result.Result {
	v := *r
	v.Receiver, v.Sender, v.Reverse, v.Streams = rcv, snd, nil, nil
	v.Link, v.Diagnoses, v.Warnings = nil, nil, []string{}
	v.Test.Direction = result.DirSend
	if dir == result.MatrixDownload {
		v.Test.Direction = result.DirReceive
	}
	return &v
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
