package rfc2544

import (
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

func okOptions() Options {
	return Options{Port: 5001, Mode: sweep.ModeWirebench, Sizes: "1470", Tests: "throughput,latency", Medium: "eth100",
		PDR: "0.5%", Loads: "50,100", MaxBurst: 1000, Trial: "2s"}
}

func TestOptionsSetup(t *testing.T) {
	asked := ""
	clock := func(host string, told bool) (bool, string) { asked = host; return told, "test" }
	s, err := okOptions().Setup("192.0.2.1", clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Config.Validate(); err != nil {
		t.Fatal(err)
	}
	if asked != "192.0.2.1" || s.Config.Latency != result.RFC2544DelayVariation || s.Test.Clock != result.RFC2544ClockSeparate ||
		s.Config.Schedule.Search.Seconds() != 2 || len(s.Config.Loads) != 2 || s.Config.BacklogFloor != sweep.ServerBacklogFloor {
		t.Errorf("setup %+v %+v", s.Config, s.Test)
	}
	o := okOptions()
	o.SameClock = true
	if s, err = o.Setup("192.0.2.1", clock); err != nil || s.Config.Latency != result.RFC2544OneWay {
		t.Errorf("--same-clock: %v %+v", err, s)
	}
	for want, change := range map[string]func(*Options){
		"invalid --tests":     func(o *Options) { o.Tests = "jitter" },
		"invalid --pdr":       func(o *Options) { o.PDR = "0" },
		"invalid --loads":     func(o *Options) { o.Loads = "0" },
		"invalid --trial":     func(o *Options) { o.Trial = "-1" },
		"invalid --max-burst": func(o *Options) { o.MaxBurst = 1 },
		"--same-clock is for": func(o *Options) { o.Mode, o.SameClock = sweep.ModeReflect, true },
		"invalid --mode":      func(o *Options) { o.Mode = "tcp" },
	} {
		o := okOptions()
		change(&o)
		if _, err := o.Setup("192.0.2.1", clock); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
}
