package sweep

import (
	"strings"
	"testing"
	"time"
)

func okOptions() Options {
	return Options{Port: 5001, Sizes: "64,1470", Mode: ModeIperf2, Loss: "0.1%", Trial: "1s", Confirm: "10s", Medium: "eth100", Repeat: 1}
}

func TestOptionsSetup(t *testing.T) {
	s, err := okOptions().Setup("192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Config.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.Config.Gap != time.Second || s.Config.BacklogFloor != ServerBacklogFloor || s.Test.TrialS != 1 || s.Test.Medium != "eth100" {
		t.Errorf("setup %+v, test %+v", s.Config, s.Test)
	}
	if _, ok := s.Runner.(SessionRunner); !ok {
		t.Errorf("runner %T, want a SessionRunner", s.Runner)
	}
	o := okOptions()
	o.Mode, o.Packets, o.MaxRate = ModeReflect, 1000, "20000pps"
	if s, err = o.Setup("127.0.0.1"); err != nil || s.Config.Trial != 0 || s.Config.MaxPPS(1470) != 20000 || s.Config.Gap != 50*time.Millisecond {
		t.Errorf("--packets --max-rate: %v, %+v", err, s)
	}
}

func TestOptionsSetupRefuses(t *testing.T) {
	for want, change := range map[string]func(*Options){
		"invalid --medium":   func(o *Options) { o.Medium = "eth7" },
		"invalid --loss":     func(o *Options) { o.Loss = "x" },
		"invalid --trial":    func(o *Options) { o.Trial = "0" },
		"invalid --gap":      func(o *Options) { o.Gap = "-1s" },
		"invalid --packets":  func(o *Options) { o.Packets = 1 },
		"invalid --repeat":   func(o *Options) { o.Repeat = 0 },
		"invalid --port":     func(o *Options) { o.Port = 70000 },
		"invalid --max-rate": func(o *Options) { o.MaxRate = "fast" },
		"invalid --mode":     func(o *Options) { o.Mode = "tcp" },
	} {
		o := okOptions()
		change(&o)
		if _, err := o.Setup("192.0.2.1"); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
}
