package ping

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// command is the ping command's flag defaults.
func command() Command {
	return Command{Count: 5, Interval: "1s", Timeout: "1s", Size: "56", Socket: "auto", Tries: 3}
}

func TestCommandPlan(t *testing.T) {
	c := command()
	c.Sizes, c.Interval, c.MTU, c.MTUSet, c.Medium = "56,1472,1473", "0.2", 1500, true, "eth100"
	p, err := c.Plan(t.Context(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Addr.Equal([]byte{127, 0, 0, 1}) || len(p.Sizes) != 3 || p.Sizes[2] != 1473 || p.Interval != 200*time.Millisecond ||
		p.Timeout != time.Second || p.Socket != result.PingSocketAuto || p.MTU != 1500 || p.Medium == nil || p.Count != 5 {
		t.Errorf("Plan = %+v", p)
	}
	if o := p.Options(); o.Count != 5 || len(o.Sizes) != 3 || o.MTU != 1500 || o.Interval != p.Interval {
		t.Errorf("Options = %+v", o)
	}
	c = command()
	c.Ladder, c.MTU, c.MTUSet = true, 1500, true
	if p, err := c.Plan(t.Context(), "127.0.0.1"); err != nil || len(p.Sizes) == 0 || p.Sizes[0] != 1472 {
		t.Errorf("--ladder: %v, %v; want the ladder from 1472", p.Sizes, err)
	}
}

func TestCommandPlanRejects(t *testing.T) {
	tests := []struct {
		change func(*Command)
		want   string
	}{
		{func(c *Command) { c.Socket = "tcp" }, "invalid --socket"},
		{func(c *Command) { c.Interval = "soon" }, "invalid --interval"},
		{func(c *Command) { c.Timeout = "0" }, "invalid --timeout"},
		{func(c *Command) { c.Count = 0 }, "at least 1"},
		{func(c *Command) { c.IPv4, c.IPv6 = true, true }, "-4 and -6"},
		{func(c *Command) { c.MTU, c.MTUSet = 20, true }, "invalid --mtu 20"},
		{func(c *Command) { c.Medium = "eth7" }, "invalid --medium"},
		{func(c *Command) { c.Source = "::1" }, "not the same IP version"},
		{func(c *Command) { c.Size = "70000" }, "over the largest echo payload"},
	}
	for _, tt := range tests {
		c := command()
		tt.change(&c)
		_, err := c.Plan(t.Context(), "127.0.0.1")
		if ce := (ConfigError{}); !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want a ConfigError saying %q", c, err, tt.want)
		}
	}
}

func TestPlanImplied(t *testing.T) {
	c := command()
	c.Medium, c.MTU, c.MTUSet = "eth100", 1500, true
	p, err := c.Plan(t.Context(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	res := &result.PingRun{Sizes: []*result.PingSize{{Size: 56, Received: 1, RTT: result.PingRTT{P50: time.Millisecond}}, {Size: 1472}}}
	im := p.Implied(res)
	if len(im) != 2 || im[0].ImpliedBPS <= 0 || im[0].RTTP50S != 0.001 || im[1].Error == "" {
		t.Errorf("Implied = %+v", im)
	}
	p.Medium = nil
	if im := p.Implied(res); im != nil {
		t.Errorf("no --medium gave %+v", im)
	}
}

func TestWriteReassembly(t *testing.T) {
	res := &ReassemblyResult{PathMTU: 1500, WithoutDF: SearchResult{Largest: 65507, Steps: []Step{{Phase: "ladder", Size: 56, Tries: 1, Answered: true}}},
		DFError: "not supported"}
	var b bytes.Buffer
	WriteReassembly(&b, res, true)
	for _, want := range []string{"ladder for path MTU 1500", "without DF: largest answered 65507 bytes (every size tried was answered)",
		"ladder    56 bytes, 1 try: answered", "with DF: not searched: not supported"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
