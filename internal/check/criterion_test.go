package check

import (
	"strings"
	"testing"
)

func TestParseCriterion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Criterion
	}{
		{"receiver.bits_per_second >= 90M", Criterion{Path: "receiver.bits_per_second", Op: ">=", Value: 90e6}},
		{"receiver.loss_percent <= 0.1", Criterion{Path: "receiver.loss_percent", Op: "<=", Value: 0.1}},
		{"cells[protocol=udp,direction=upload].bits_per_second>=1.5G", Criterion{Path: "cells[protocol=udp,direction=upload].bits_per_second", Op: ">=", Value: 1.5e9}},
		{"sizes[size=1472].rtt_ms.avg < 20", Criterion{Path: "sizes[size=1472].rtt_ms.avg", Op: "<", Value: 20}},
		{"receiver.jitter_ms > -1", Criterion{Path: "receiver.jitter_ms", Op: ">", Value: -1}},
		{"receiver.bits_per_second >= 95% of baseline", Criterion{Path: "receiver.bits_per_second", Op: ">=", Value: 0.95, Relative: true}},
		{"  sizes[size=56].rtt_ms.avg <= 110 % of baseline ", Criterion{Path: "sizes[size=56].rtt_ms.avg", Op: "<=", Value: 1.1, Relative: true}},
		{"sender.packets >= 250k", Criterion{Path: "sender.packets", Op: ">=", Value: 250e3}},
	} {
		got, err := ParseCriterion(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		tc.want.Text = strings.TrimSpace(tc.in)
		if got != tc.want {
			t.Errorf("%q: got %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// TestParseCriterionErrors: each bad criterion is refused with a message
// that says what is wrong.
func TestParseCriterionErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "empty criterion"},
		{"receiver.bits_per_second 90M", "no operator"},
		{"receiver.bits_per_second == 90M", `operator "==" is not supported`},
		{"receiver.bits_per_second = 90M", `operator "=" is not supported`},
		{">= 90M", "no figure before"},
		{"receiver.bits_per_second >=", "no bound after"},
		{"receiver.bits_per_second >= fast", `bound "fast" is not a number`},
		{"receiver.bits_per_second >= 90m", `"m" is ambiguous`},
		{"receiver.bits_per_second >= 95 of baseline", "not a share of the baseline"},
		{"receiver.bits_per_second >= -5% of baseline", "not a share of the baseline"},
		{"receiver.bits_per_second >= baseline", `relative bound is written "N% of baseline"`},
		{"receiver bits >= 9", "holds a space or an operator"},
		{"a => 9", "holds a space or an operator"},
	} {
		_, err := ParseCriterion(tc.in)
		if err == nil {
			t.Errorf("%q: no error", tc.in)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %q, want it to say %q", tc.in, err, tc.want)
		}
	}
}
