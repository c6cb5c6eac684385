package pscheduler

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wirebench/wirebench/internal/units"
)

// MergeThroughput merges the participants' throughput results into the
// test's result. Participant 0 ran the client, whose result carries both
// the sender's and the receiver's figures (wirebench servers report what
// they received), so it is the merged result, with participant 1's diags
// added. In a reverse test participant 1 sent: its sending rate becomes
// the summary's throughput-bits, participant 0's received rate its
// receiver-throughput-bits.
func MergeThroughput(in MergeInput) (ThroughputResult, error) {
	if len(in.Results) == 0 {
		return ThroughputResult{}, errNoResults
	}
	var s ThroughputSpec
	if err := json.Unmarshal(in.Test.Spec, &s); err != nil {
		return ThroughputResult{}, fmt.Errorf("merged-results: reading throughput spec: %w", err)
	}
	want := 2
	if s.SingleEnded || s.Loopback {
		want = 1
	}
	if len(in.Results) != want {
		return ThroughputResult{}, fmt.Errorf("merged-results: expected %s, got %d", units.Plural(want, "result"), len(in.Results))
	}
	parts := make([]*ThroughputResult, len(in.Results))
	for i, raw := range in.Results {
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var r ThroughputResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return ThroughputResult{}, fmt.Errorf("merged-results: reading participant %d's result: %w", i, err)
		}
		parts[i] = &r
	}
	out := failed("participant 0 produced no result", "")
	if parts[0] != nil {
		out = *parts[0]
	}
	if out.Intervals == nil {
		out.Intervals = []ThroughputInterval{}
	}
	var diags []string
	for i, p := range parts {
		if p != nil && p.Diags != "" {
			diags = append(diags, fmt.Sprintf("Participant %d:\n%s", i, p.Diags))
		}
	}
	out.Diags = strings.Join(diags, "\n\n")
	if len(parts) > 1 && parts[1] != nil && parts[1].Succeeded && out.Summary.Summary != nil && parts[1].Summary.Summary != nil {
		if s.Reverse {
			senderRate(&out, *parts[1])
		} else if out.Summary.Summary.ReceiverThroughputBits == nil {
			out.Summary.Summary.ReceiverThroughputBits = parts[1].Summary.Summary.ReceiverThroughputBits
		}
	}
	return out, nil
}

// senderRate puts the sender's rate and bytes from the sending side's
// result (the server's, in a reverse test) into out's summary, where the
// receiving client could give only its own.
func senderRate(out *ThroughputResult, sender ThroughputResult) {
	sum, snd := out.Summary.Summary, sender.Summary.Summary
	if sum == nil || snd == nil || !sender.Succeeded {
		return
	}
	if sum.ReceiverThroughputBits == nil {
		sum.ReceiverThroughputBits = floatPtr(sum.ThroughputBits)
	}
	sum.ThroughputBits, sum.ThroughputBytes = snd.ThroughputBits, snd.ThroughputBytes
	if snd.Retransmits != nil {
		sum.Retransmits = snd.Retransmits
	}
}

// MergeRTT merges an rtt test's one result: it is the test's result.
func MergeRTT(in MergeInput) (RTTResult, error) {
	if len(in.Results) != 1 {
		return RTTResult{}, fmt.Errorf("merged-results: an rtt test has one result, got %d", len(in.Results))
	}
	raw := in.Results[0]
	if len(raw) == 0 || string(raw) == "null" {
		return rttFailed("participant 0 produced no result", ""), nil
	}
	var r RTTResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return RTTResult{}, fmt.Errorf("merged-results: reading the rtt result: %w", err)
	}
	if r.Roundtrips == nil {
		r.Roundtrips = []Roundtrip{}
	}
	return r, nil
}

// Merge runs merged-results for in's test type.
func Merge(in MergeInput) (any, error) {
	switch in.Test.Type {
	case TestThroughput:
		return MergeThroughput(in)
	case TestRTT:
		return MergeRTT(in)
	}
	return nil, fmt.Errorf("merged-results: unsupported test type %q", in.Test.Type)
}
