// Package calc works out calc's document: what a medium carries (goodput,
// frame rate, wire efficiency, the ICMP echo's two counts) for a list of
// payload sizes on one or more media, from the options calc is given, and
// its text; and a measured result placed against a medium's line rate
// (--medium). It measures nothing.
package calc

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// Kind is the "kind" of calc's JSON document (docs/calc.md); its "schema"
// is result.Schema.
const Kind = result.KindCalc

// Plan is what to work out: every payload on every medium over one stack.
type Plan struct {
	Media []linerate.Medium
	Stack linerate.Stack
	// Payloads are the payload sizes; Sizes what the user typed for each
	// (frame sizes with --frame), as long as Payloads.
	Payloads []int
	Sizes    []int
	// RTT, for ICMP, is a measured round trip to turn into the line rate
	// it implies; 0 for none.
	RTT time.Duration
	// Measured, when not nil, is a measured figure to place on the one
	// medium and payload, typed as MeasuredAsTyped.
	Measured        *units.Rate
	MeasuredAsTyped string
}

// Doc is calc's JSON document (result.Calc), documented in docs/calc.md.
type Doc = result.Calc

// Stack is the protocol stack the figures assume.
type Stack = result.CalcStack

// Medium describes one medium of the document.
type Medium = result.CalcMedium

// Result is one medium and payload size.
type Result = result.CalcResult

// Echo is the ICMP echo view: the count that leaves out the inter-frame
// gap (a common miscount) and the correct one.
type Echo = result.CalcEcho

// Build works out the document of p: every payload on every medium, media
// in the order given.
func Build(p Plan) (Doc, error) {
	s := p.Stack
	d := Doc{Schema: result.Schema, Kind: Kind, Stack: Stack{Protocol: s.Transport.String(), TCPTimestamps: s.Transport == linerate.TCP && s.TCPTimestamps, VLAN: s.VLAN, MTU: s.MTU}}
	if s.Transport != linerate.Raw {
		d.Stack.IP = map[bool]string{false: "ipv4", true: "ipv6"}[s.IPv6]
	}
	d.Results = []Result{}
	for _, m := range p.Media {
		d.Media = append(d.Media, Describe(m))
	}
	for _, m := range p.Media {
		for i, pl := range p.Payloads {
			r, err := One(m, s, pl, p.RTT)
			if err != nil {
				return d, err
			}
			r.Size = p.Sizes[i]
			if p.Measured != nil {
				if r.Measured, err = Measure(r, m, s, *p.Measured, p.MeasuredAsTyped); err != nil {
					return d, err
				}
			}
			d.Results = append(d.Results, r)
		}
	}
	return d, nil
}

// Describe is m as the document shows it.
func Describe(m linerate.Medium) Medium {
	cm := Medium{Name: m.Name, Kind: m.Kind.String(), BitRateBPS: m.BitRate, Aggregate: m.Aggregate, MaxFPS: m.MaxFPS, Source: m.Source}
	if m.Bus != nil {
		cm.BusCeilingBPS = m.Bus.BusCeilingBPS()
		cm.Class = m.Class.String()
	}
	return cm
}

// One works out one payload on one medium; for ICMP also the echo's two
// counts and, when rtt > 0, the line rates that round trip implies.
func One(m linerate.Medium, s linerate.Stack, payload int, rtt time.Duration) (Result, error) {
	if s.Transport != linerate.ICMP {
		b, err := linerate.Analyze(m, s, payload)
		return Result{LineBreakdown: b}, err // linerate's errors say what is wrong; calc prints them as they are
	}
	e, err := linerate.AnalyzeEcho(m, s, payload)
	if err != nil {
		return Result{}, err
	}
	ce := &Echo{
		RoundTripWireS: e.RoundTripWire, NoGapBytes: e.NoGapBytes, NoGapOverhead: e.NoGapOverhead,
		WireBytes: e.Request.WireBytes, WireOverhead: e.Request.Fragments[0].Overhead(),
	}
	if rtt > 0 {
		ce.RTTS = rtt.Seconds()
		ce.ImpliedNoGapBPS = linerate.ImpliedBPS(e.NoGapBytes, rtt.Seconds())
		ce.ImpliedBPS = linerate.ImpliedBPS(e.Request.WireBytes, rtt.Seconds())
		ce.ImpliedShareOfMedium = ce.ImpliedBPS / m.BitRate
	}
	return Result{LineBreakdown: e.Request, Echo: ce}, nil
}

// MaxRows bounds a table so a typo cannot print a million lines.
const MaxRows = 10000

// ParseSizes reads "1470", a range "64-1518" (in steps of step bytes, or
// 16 steps when step is 0; the high end always included) or a list
// "64,128,1470".
func ParseSizes(spec string, step int) ([]int, error) {
	if step < 0 {
		return nil, fmt.Errorf("invalid --step %d: want a positive number of bytes", step)
	}
	if lo, hi, ok := strings.Cut(spec, "-"); ok {
		return parseRange(spec, lo, hi, step)
	}
	var out []int
	for _, s := range strings.Split(spec, ",") {
		n, err := parseSize(s)
		if err != nil {
			return nil, fmt.Errorf("invalid size %q: want whole bytes, like 1470 or 64,128,1470 or 64-1518", s)
		}
		out = append(out, n)
	}
	if len(out) > MaxRows {
		return nil, fmt.Errorf("more than %d sizes", MaxRows)
	}
	return out, nil
}

func parseRange(spec, lo, hi string, step int) ([]int, error) {
	a, errA := parseSize(lo)
	b, errB := parseSize(hi)
	if errA != nil || errB != nil || b < a {
		return nil, fmt.Errorf("invalid range %q: want LOW-HIGH in bytes, like 64-1518", spec)
	}
	if step == 0 {
		step = max(1, (b-a+15)/16)
	}
	if (b-a)/step+2 > MaxRows {
		return nil, fmt.Errorf("range %q with step %d gives more than %d rows", spec, step, MaxRows)
	}
	var out []int
	for n := a; n < b; n += step {
		out = append(out, n)
		if step >= b-n {
			break // n+step would reach b, or overflow near MaxInt
		}
	}
	return append(out, b), nil
}

func parseSize(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("parsing %q: not a whole number of bytes", s)
	}
	return n, nil
}
