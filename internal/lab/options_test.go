package lab

import (
	"strings"
	"testing"
)

// TestOptionsConfig: reflect's and relay's options are checked and built,
// each mistake naming what is wrong.
func TestOptionsConfig(t *testing.T) {
	addr, _, err := ReflectOptions{Port: 5001, Bind: "127.0.0.1"}.Config()
	if err != nil || addr != "127.0.0.1:5001" {
		t.Errorf("reflect: %q, %v", addr, err)
	}
	cfg, err := RelayOptions{Options: Options{Model: "loss=1%,seed=7"}, Listen: ":6001", To: "127.0.0.1:5001", Both: true}.Config()
	if err != nil || cfg.Listen != ":6001" || cfg.To != "127.0.0.1:5001" || !cfg.Both || cfg.ModelText != "loss=1%,seed=7" {
		t.Errorf("relay: %+v, %v", cfg, err)
	}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{errOf3(ReflectOptions{Port: -1}.Config()), "invalid port"},
		{errOf3(ReflectOptions{Options: Options{Duration: -1}}.Config()), "invalid --duration"},
		{errOf3(ReflectOptions{Options: Options{Model: "nosuch=1"}}.Config()), "nosuch"},
		{errOf2(RelayOptions{Listen: ":1"}.Config()), "needs --listen"},
		{errOf2(RelayOptions{Listen: "x", To: "y"}.Config()), `invalid address "x"`},
	} {
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("got %v, want %q", tt.err, tt.want)
		}
	}
}

// errOf3 and errOf2 keep only the error of a call.
func errOf3[A, B any](_ A, _ B, err error) error { return err }

func errOf2[A any](_ A, err error) error { return err }
