package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// linkFlags put a result against the line rate of the medium
// (--medium, --link-rate), as `wirebench calc` computes it.
type linkFlags struct {
	medium   string
	linkRate string
	mtu      int
	ipv6     bool
	vlan     bool
}

func (l *linkFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&l.medium, "medium", "", "read results against the line rate of medium `NAME` (eth100, eth1g, usb2-ecm, ...; see wirebench calc --help)")
	fl.StringVar(&l.linkRate, "link-rate", "", "read results against an Ethernet link of `RATE` bit/s (e.g. 100M)")
	fl.IntVar(&l.mtu, "mtu", 1500, "IP MTU of the medium, for --medium/--link-rate")
	fl.BoolVar(&l.vlan, "vlan", false, "frames carry an 802.1Q tag, for --medium/--link-rate")
}

// linkPlacer places results on a medium; nil places nothing.
type linkPlacer struct {
	m     linerate.Medium
	stack linerate.Stack
}

func (l *linkFlags) resolve() (*linkPlacer, error) {
	name := l.medium
	switch {
	case l.medium != "" && l.linkRate != "":
		return nil, usagef("choose one of --medium and --link-rate")
	case l.linkRate != "":
		r, err := units.ParseRate(l.linkRate)
		if err != nil || r.PPS {
			return nil, usagef("invalid --link-rate %q: want a bit rate like 100M", l.linkRate)
		}
		name = fmt.Sprintf("custom:%.0f,38,64,0", r.Value)
	case l.medium == "":
		return nil, nil
	}
	m, err := linerate.LookupMedium(name)
	if err != nil {
		return nil, usageError{err} // the error lists the known media
	}
	return &linkPlacer{m: m, stack: linerate.Stack{VLAN: l.vlan, MTU: l.mtu}}, nil
}

// apply fills r.Link from the receiver goodput (or the sender's, when the
// receiver's is unknown), or warns when the figures cannot be placed.
func (p *linkPlacer) apply(r *result.Result) {
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
	pl, err := linerate.Measured(p.m, s, payload, goodput)
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
func (p *linkPlacer) stackFor(r *result.Result) (linerate.Stack, int) {
	s := p.stack
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

// percent is goodput's share of the medium's theoretical goodput for r's
// protocol and payload; ok is false when it cannot be placed.
func (p *linkPlacer) percent(r *result.Result, goodput float64) (float64, bool) {
	s, payload := p.stackFor(r)
	pl, err := linerate.Measured(p.m, s, payload, goodput)
	if err != nil {
		return 0, false
	}
	return pl.PercentOfTheoretical, true
}
