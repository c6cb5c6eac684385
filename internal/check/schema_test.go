package check

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestCheckPath: paths a document kind can hold pass, short forms
// included; a misspelt one is refused naming the nearest valid path, in
// the form the plan wrote it.
func TestCheckPath(t *testing.T) {
	for _, tc := range []struct {
		kind, path string
		want       string // "" = valid; else in the error
	}{
		{"client", "receiver.bits_per_second", ""},
		{"client", "receiver.loss_percent", ""}, // derived by check
		{"client", "loss_percent", ""},          // short form
		{"client", "sender.tcp.retransmits", ""},
		{"client", "intervals.0.bits_per_second", ""},
		{"client", "reverse.receiver.bits_per_second", ""},
		{"matrix", "udp.upload.bits_per_second", ""},
		{"matrix", "udp.bidir.download.loss_percent", ""},
		{"matrix", "cells[protocol=udp,direction=upload].result.receiver.loss_percent", ""},
		{"sweep", "sizes[size=1472].rate_pps", ""},
		{"ping", "sizes[size=56].rtt_ms.avg", ""}, // rtt_ms has its own JSON: not checked further
		{"ping", "sizes[size=56].loss_pct", ""},
		{"rfc2544", "sizes[size=512].latency[load_percent=90].p99_ms", ""},
		{"rfc2544", "sizes[size=64].loss_curve[offered_percent=100].loss_percent", ""},

		{"client", "receiver.bits_per_secnd", `"receiver" has no key "bits_per_secnd"; did you mean "receiver.bits_per_second"?`},
		{"client", "reciever.bits_per_second", `a test document has no key "reciever"; did you mean "receiver.bits_per_second"?`},
		{"client", "intervals.first.bits_per_second", `"intervals" is a list`},
		{"client", "receiver.bits_per_second.max", `is a number, with no key "max"`},
		{"client", "receiver", "it is an object, not a number"},
		{"client", "test.protocol", "it is a string, not a number"},
		{"matrix", "udp.upload.bits_per_secnd", `did you mean "udp.upload.bits_per_second"?`},
		{"rfc2544", "sizes[size=64].back_to_back_frame", `did you mean "sizes[size=64].back_to_back_frames"?`},
		{"client", "zzzzzzzzzzzz", "the keys there are"},
	} {
		err := checkPath(Kinds[tc.kind], tc.path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %s: %v, want it valid", tc.kind, tc.path, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %s: error %v, want one saying %s", tc.kind, tc.path, err, tc.want)
		}
	}
}

// TestRunChecksPathsFirst: a misspelt figure in a later step stops the
// plan before its first step runs, as a plan error naming the figure
// meant.
func TestRunChecksPathsFirst(t *testing.T) {
	st := openStore(t)
	f := &fakeRunner{st: st, rates: map[string][]float64{"a": {95}, "b": {95}}}
	p, err := ParsePlan(strings.NewReader(`steps:
  - {name: a, kind: client, args: [h], criteria: ["receiver.bits_per_second >= 1M"]}
  - {name: b, kind: client, args: [h], criteria: ["receiver.bits_per_secnd >= 1M"]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), p, Options{Run: f.run, Store: st})
	if !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), `step "b"`) || !strings.Contains(err.Error(), `did you mean "receiver.bits_per_second"?`) {
		t.Errorf("error %v, want a plan error for step b naming receiver.bits_per_second", err)
	}
	if len(f.argvs) != 0 {
		t.Errorf("%d steps ran before the bad path was found, want none", len(f.argvs))
	}
}
