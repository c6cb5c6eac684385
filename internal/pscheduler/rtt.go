package pscheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/ping"
	"github.com/wirebench/wirebench/internal/result"
)

// Defaults of an rtt test, as pScheduler's ping tool has them.
const (
	defaultRTTCount    = 5
	defaultRTTInterval = time.Second
	defaultRTTTimeout  = time.Second
	defaultRTTLength   = 56 // ICMP payload bytes, as ping sends by default
	icmpHeader         = 8
)

// rttPlan is an rtt spec with its defaults applied.
type rttPlan struct {
	count             int
	interval, timeout time.Duration
	deadline          time.Duration // 0 = none
	length            int
	df                bool
}

func planRTT(s RTTSpec) (rttPlan, error) {
	p := rttPlan{count: defaultRTTCount, interval: defaultRTTInterval, timeout: defaultRTTTimeout, length: defaultRTTLength}
	if s.Count > 0 {
		p.count = s.Count
	}
	if s.Length > 0 {
		p.length = s.Length
	}
	p.df = s.Fragment != nil && !*s.Fragment
	for _, f := range []struct {
		name, v string
		to      *time.Duration
	}{{"interval", s.Interval, &p.interval}, {"timeout", s.Timeout, &p.timeout}, {"deadline", s.Deadline, &p.deadline}} {
		if f.v == "" {
			continue
		}
		d, err := ParseDuration(f.v)
		if err != nil {
			return p, fmt.Errorf("%s: %w", f.name, err)
		}
		*f.to = d
	}
	if p.interval > 0 && int64(p.count-1) > int64(24*time.Hour/p.interval) {
		return p, fmt.Errorf("count %d at interval %v runs longer than a day", p.count, p.interval)
	}
	return p, nil
}

// rttDuration is how long an rtt run takes: the probes, one timeout for
// the last of them (or the deadline instead), and a second of slack.
func rttDuration(s RTTSpec) (time.Duration, error) {
	p, err := planRTT(s)
	if err != nil {
		return 0, err
	}
	d := time.Duration(p.count-1)*p.interval + max(p.timeout, 2*time.Second)
	if p.deadline > 0 {
		d = p.deadline
	}
	return d + 2*time.Second, nil
}

// RunRTT pings the spec's dest with wirebench's ICMP ping (a raw socket as
// root or with CAP_NET_RAW, else an unprivileged ICMP socket where
// net.ipv4.ping_group_range allows it) and reports in pScheduler's rtt
// result format. Lost probes have no roundtrip entry, as with ping.
func RunRTT(ctx context.Context, in RunInput) RTTResult {
	var s RTTSpec
	if err := json.Unmarshal(in.Test.Spec, &s); err != nil {
		return rttFailed(fmt.Sprintf("reading rtt spec: %v", err), "")
	}
	if in.Participant != 0 {
		return rttFailed(fmt.Sprintf("invalid participant %d: an rtt test has one", in.Participant), "")
	}
	p, err := planRTT(s)
	if err != nil {
		return rttFailed(err.Error(), "")
	}
	if err := sleepUntil(ctx, in.Schedule.Start); err != nil {
		return rttFailed(err.Error(), "")
	}
	limit, _ := rttDuration(s)
	if p.deadline > 0 {
		limit = p.deadline
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	addr, err := resolve(ctx, s.Dest, s.IPVersion)
	if err != nil {
		return rttFailed(err.Error(), "")
	}
	var mu sync.Mutex
	var events []ping.Event
	cfg := ping.Config{Target: addr, Source: s.Source, OnEvent: func(ev ping.Event) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}}
	opts := ping.Options{Sizes: []int{p.length}, Count: p.count, Interval: p.interval, Timeout: p.timeout, DF: p.df, TTL: s.TTL}
	res, err := ping.Run(ctx, s.Dest, cfg, opts)
	diags := fmt.Sprintf("wirebench ping %s (%s): %d probes of %d bytes, interval %v, timeout %v, don't-fragment %v, ttl %d (0: default)",
		s.Dest, addr, p.count, p.length, p.interval, p.timeout, p.df, s.TTL)
	if err != nil {
		return rttFailed(fmt.Sprintf("wirebench ping: %v", err), diags)
	}
	mu.Lock()
	defer mu.Unlock()
	return rttResult(res, events, diags)
}

// resolve finds dest's address of the ip-version asked for (0: either).
func resolve(ctx context.Context, dest string, version int) (net.IP, error) {
	network := "ip"
	switch version {
	case 4:
		network = "ip4"
	case 6:
		network = "ip6"
	}
	ips, err := net.DefaultResolver.LookupIP(ctx, network, strings.Trim(dest, "[]"))
	if err != nil || len(ips) == 0 {
		return nil, fmt.Errorf("resolving %s (%s): %v", dest, network, err)
	}
	return ips[0], nil
}

// rttResult builds the result from the run and its events.
func rttResult(res *result.PingRun, events []ping.Event, diags string) RTTResult {
	out := RTTResult{Schema: 1, Succeeded: true, Roundtrips: []Roundtrip{}}
	var notes []string
	reorders, prev := 0, 0
	for _, ev := range events {
		rt := Roundtrip{Seq: ev.Seq}
		if ev.From != nil {
			rt.IP = ev.From.String()
		}
		switch ev.Outcome {
		case ping.OutcomeReply, ping.OutcomeDuplicate:
			rt.Length, rt.RTT = ev.Size+icmpHeader, FormatDuration(ev.RTT)
			if ev.Outcome == ping.OutcomeReply {
				if ev.Seq < prev {
					reorders++
				}
				prev = ev.Seq
			}
		case ping.OutcomeTooBig:
			rt.Error = "fragmentation-needed-and-df-set"
		default:
			// Late, corrupt, unreachable (its ICMP code is not kept),
			// send errors: counted lost, told in diags.
			notes = append(notes, fmt.Sprintf("seq %d: %s", ev.Seq, ev.Outcome))
			continue
		}
		out.Roundtrips = append(out.Roundtrips, rt)
	}
	sr := &result.PingSize{}
	if len(res.Sizes) > 0 {
		sr = res.Sizes[0]
	}
	out.Sent = sr.Sent
	out.Received, out.Duplicates, out.Reorders = intPtr(sr.Received), intPtr(sr.Duplicates), intPtr(reorders)
	out.Lost = intPtr(sr.Sent - sr.Received)
	if sr.Sent > 0 {
		out.Loss = math.Min(1, float64(sr.Sent-sr.Received)/float64(sr.Sent))
	}
	if sr.Received > 0 {
		out.Min, out.Max = FormatDuration(sr.RTT.Min), FormatDuration(sr.RTT.Max)
		out.Mean, out.Stddev = FormatDuration(sr.RTT.Avg), FormatDuration(sr.RTT.Mdev)
	}
	if res.Error != "" {
		notes = append(notes, "ended early: "+res.Error)
	}
	if sr.Sent == 0 {
		out.Succeeded, out.Error = false, "no probe could be sent"
		if sr.Error != "" {
			out.Error += ": " + sr.Error
		}
	}
	out.Diags = diags + fmt.Sprintf("\nsocket: %s", res.Socket.Kind)
	if len(notes) > 0 {
		out.Diags += "\n" + strings.Join(notes, "\n")
	}
	return out
}

// rttFailed is an rtt result for a run that measured nothing.
func rttFailed(msg, diags string) RTTResult {
	return RTTResult{Schema: 1, Succeeded: false, Error: msg, Diags: diags}
}
