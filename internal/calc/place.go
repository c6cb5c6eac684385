package calc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// Placer places measured results against the line rate of a medium
// (--medium, --link-rate), as calc works it out; a nil Placer places
// nothing.
type Placer struct {
	Medium linerate.Medium
	// Stack is the medium's IP stack (MTU, VLAN); the transport and the
	// IP version are each result's own.
	Stack linerate.Stack
}

// Apply fills r.Link from the receiver goodput (or the sender's, when the
// receiver's is unknown), or warns when the figures cannot be placed.
func (p *Placer) Apply(r *result.Result) {
	if p == nil {
		return
	}
	s, payload := p.stackFor(r)
	goodput, what := 0.0, ""
	switch {
	case r.Receiver != nil && r.Receiver.BitsPerSecond > 0:
		goodput, what = r.Receiver.BitsPerSecond, "receiver"
	case r.Sender != nil && r.Sender.BitsPerSecond > 0:
		goodput, what = r.Sender.BitsPerSecond, "sender"
	default:
		r.Warn("--medium: no goodput was measured, so nothing can be placed against the line rate")
		return
	}
	pl, err := linerate.Measured(p.Medium, s, payload, goodput)
	if err != nil {
		r.Warn("--medium: " + err.Error())
		return
	}
	r.Link = &result.Link{
		Medium: pl.Medium, TheoreticalBPS: pl.TheoreticalBPS, PercentOfTheoretical: pl.PercentOfTheoretical,
		FramesPerSecond: pl.FramesPerSecond, WireL2BPS: pl.WireL2BPS, WireL1BPS: pl.WireL1BPS,
		Status: linerate.StatusOK,
	}
	if why := linerate.AboveMedium(what+" goodput", pl.PercentOfTheoretical, pl.Medium); why != "" {
		r.Link.Status, r.Link.Reason = linerate.StatusSuspect, why
	}
	if len(r.Diagnoses) > 0 {
		// A stream using most of the medium is limited by bandwidth,
		// whatever its arrival pattern looks like.
		if pl.PercentOfTheoretical < 90 {
			r.Link.Diagnosis = r.Diagnoses[0]
		} else {
			r.Diagnoses = nil
		}
	}
	if w := pl.Excess(what); w != "" {
		r.Warn("--medium: " + w)
	}
	if what == "sender" {
		r.Warn("--medium: the receiver's goodput is unknown, so the placement uses what was sent, not what arrived")
	}
	if r.Test.Protocol == result.TCP {
		r.Warn(fmt.Sprintf("--medium: TCP is placed assuming full-size segments (MSS %d with timestamps); ACKs and retransmissions are not counted", payload))
	}
}

// stackFor is the protocol stack and payload size r's traffic crossed the
// medium with.
func (p *Placer) stackFor(r *result.Result) (linerate.Stack, int) {
	s := p.Stack
	s.IPv6 = strings.Count(r.Test.Peer, ":") > 1
	payload := r.Test.Length
	switch r.Test.Protocol {
	case result.UDP:
		s.Transport = linerate.UDP
	default:
		s.Transport = linerate.TCP
		s.TCPTimestamps = true
		payload = s.MSS()
	}
	return s, payload
}

// Percent is goodput's share of the medium's theoretical goodput for r's
// protocol and payload; ok is false when it cannot be placed.
func (p *Placer) Percent(r *result.Result, goodput float64) (float64, bool) {
	s, payload := p.stackFor(r)
	pl, err := linerate.Measured(p.Medium, s, payload, goodput)
	if err != nil {
		return 0, false
	}
	return pl.PercentOfTheoretical, true
}

// LinkOptions are the flags that put a result against a medium's line
// rate (--medium, --link-rate, --mtu, --vlan), as typed.
type LinkOptions struct {
	Medium, LinkRate string
	MTU              int
	VLAN             bool
}

// Placer checks the options and returns the placer they ask for; nil
// places nothing. Every error is a mistake in them.
func (o LinkOptions) Placer() (*Placer, error) {
	name := o.Medium
	switch {
	case o.Medium != "" && o.LinkRate != "":
		return nil, errors.New("choose one of --medium and --link-rate")
	case o.LinkRate != "":
		r, err := units.ParseRate(o.LinkRate)
		if err != nil || r.PPS {
			return nil, fmt.Errorf("invalid --link-rate %q: want a bit rate like 100M", o.LinkRate)
		}
		name = fmt.Sprintf("custom:%.0f,38,64,0", r.Value)
	case o.Medium == "":
		return nil, nil
	}
	m, err := linerate.LookupMedium(name)
	if err != nil {
		return nil, err // the error lists the known media
	}
	return &Placer{Medium: m, Stack: linerate.Stack{VLAN: o.VLAN, MTU: o.MTU}}, nil
}
