package sockopt

import "testing"

func TestTypedOptions(t *testing.T) {
	o, err := Typed{Window: "64K", MSS: 536, NoDelay: true, TOS: "lowdelay", TTL: 9}.Options()
	if err != nil {
		t.Fatal(err)
	}
	if o.Buffer != 65536 || o.MSS != 536 || !o.NoDelay || !o.SetTOS || o.TOS != 0x10 || o.TTL != 9 {
		t.Errorf("Options = %+v", o)
	}
	if o, err := (Typed{}).Options(); err != nil || o != (Options{}) {
		t.Errorf("no flags gave %+v, %v; want the zero options", o, err)
	}
	for _, bad := range []Typed{{Window: "0"}, {Window: "2G"}, {Window: "x"}, {MSS: 87}, {MSS: 65496}, {TOS: "256"}, {TTL: 256}, {TTL: -1}} {
		if o, err := bad.Options(); err == nil {
			t.Errorf("%+v gave %+v, want an error", bad, o)
		}
	}
}

func TestParseTOS(t *testing.T) {
	for in, want := range map[string]int{"0x10": 16, "16": 16, "020": 16, "0": 0, "LowCost": 2, "throughput": 8} {
		if got, err := ParseTOS(in); err != nil || got != want {
			t.Errorf("ParseTOS(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "256", "fast"} {
		if v, err := ParseTOS(in); err == nil {
			t.Errorf("ParseTOS(%q) = %d, want an error", in, v)
		}
	}
}
