package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/calc"
)

// The golden files under testdata/calc are rewritten with
// go test ./internal/cli -run TestCalcGolden -update
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func runCalcArgs(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"calc"}, args...), &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestCalcGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
		must []string // figures the output has to show
	}{
		{"seed004-ping", []string{"--medium", "eth100", "--proto", "icmp", "--payload", "65500", "--explain", "--rtt", "13ms"},
			[]string{"65508 bytes of IPv4 data", "45 IPv4 packets", "65508 + 45 × 46 = 67578 bytes", "65508 + 45 × 58 = 68118 bytes", "83.17 Mbit/s counted without the inter-frame gap", "83.84 Mbit/s correct", "10.899 ms"}},
		{"eth100-udp1470", []string{"--medium", "eth100", "--proto", "udp", "--payload", "1470", "--explain"}, []string{"max goodput:      95.70 Mbit/s", "8,138.02"}},
		{"eth100-tcp1448", []string{"--medium", "eth100", "--proto", "tcp", "--payload", "1448"}, []string{"max goodput:      94.15 Mbit/s"}},
		{"eth100-tcp-default-mss", []string{"--medium", "eth100", "--proto", "tcp"}, []string{"1448 bytes", "94.15 Mbit/s"}},
		{"rfc2544-100m", []string{"--medium", "eth100", "--frame", "64,128,256,512,1024,1280,1518"}, []string{"148,810", "8,127"}},
		{"rfc2544-1g", []string{"--medium", "eth1g", "--frame", "64,1518"}, []string{"1,488,095", "81,274"}},
		{"usb2-ecm", []string{"--medium", "usb2-ecm", "--payload", "1470", "--explain"}, []string{"bus ceiling 425.984 Mbit/s", "3 bus packets"}},
		{"usb2-ecm-zlp", []string{"--medium", "usb2-ecm", "--payload", "470", "--explain"}, []string{"zero-length packet"}},
		{"usb2-eem-aggregate", []string{"--medium", "usb2-eem", "--aggregate", "2", "--payload", "64,512,1470", "--explain"}, []string{"2 frames per USB 2.0"}},
		{"usb2-ncm-rndis-compare", []string{"--compare", "usb2-ncm", "usb2-rndis", "--payload", "1470"}, []string{"usb2-rndis allows"}},
		{"range", []string{"--medium", "eth100", "--payload", "64-1518", "--step", "256"}, []string{"1518"}},
		{"vlan-ipv6-jumbo", []string{"--medium", "eth10g", "--vlan", "--ipv6", "--mtu", "9000", "--payload", "8952"}, []string{"vlan mtu 9000"}},
		{"custom", []string{"--medium", "custom:50M,10,64,2000", "--payload", "1000", "--explain"}, []string{"frame rate cap"}},
		{"json", []string{"--medium", "eth100", "--payload", "1470", "--json"}, []string{`"goodput_bps": 95703125`}},
		{"measured-usb-vs-eth", []string{"--medium", "eth100", "--payload", "1470", "--measured", "83.6M"},
			[]string{"87.4 % of 95.70 Mbit/s", "7,108.84 frames/s", "fits: nothing else"}},
		{"measured-pps-tick", []string{"--medium", "eth100", "--payload", "1470", "--measured", "7000pps"},
			[]string{"82.32 Mbit/s", "86.0 % of 95.70", "7,000 frames/s: a 1 ms tick with 7 frames per tick would give exactly this", "a 4 ms tick with 28, a 10 ms tick with 70"}},
		{"measured-fragmented-tick", []string{"--medium", "eth100", "--payload", "8000", "--measured", "1000pps"},
			[]string{"6,000.00 frames/s (datagrams/s 1,000.00)", "a 1 ms tick with 1 datagram per tick"}},
		{"measured-usb-ceiling", []string{"--medium", "eth1g", "--payload", "1470", "--measured", "407.5M"},
			[]string{"42.6 % of 957.03", "of the 407.68 Mbit/s usb2-ecm allows at most"}},
		{"measured-above-medium", []string{"--medium", "eth100", "--payload", "1470", "--measured", "96M"}, []string{"suspect: the measured goodput is 100.31 %"}},
		{"measured-json", []string{"--medium", "eth100", "--payload", "1470", "--measured", "7000pps", "--json"},
			[]string{`"as_typed": "7000pps"`, `"goodput_bps": 82320000`, `"per_tick": 7`}},
		{"json-echo", []string{"--medium", "eth100", "--proto", "icmp", "--payload", "65500", "--rtt", "13ms", "--json"}, []string{`"no_gap_bytes": 67578`, `"wire_bytes": 68118`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCalcArgs(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, m := range tt.must {
				if !strings.Contains(out, m) {
					t.Errorf("output lacks %q:\n%s", m, out)
				}
			}
			if strings.Contains(strings.ToLower(out), "seed") {
				t.Errorf("output cites a seed report instead of saying what is counted:\n%s", out)
			}
			golden := filepath.Join("testdata", "calc", tt.name+".golden")
			if updateGolden() {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("reading golden file (run with -update): %v", err)
			}
			if out != string(want) {
				t.Errorf("output differs from %s:\n%s", golden, out)
			}
		})
	}
}

func TestCalcJSONShape(t *testing.T) {
	out, _, code := runCalcArgs(t, "--compare", "eth100", "usb2-eem", "--payload", "64,1470", "--json")
	if code != 0 {
		t.Fatal(code)
	}
	var doc calc.Doc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "wirebench/1" || doc.Kind != "calc" || len(doc.Media) != 2 || len(doc.Results) != 4 || doc.Media[1].BusCeilingBPS != 425.984e6 {
		t.Errorf("document %+v", doc)
	}
}

func TestCalcBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no medium", nil, "--medium is required"},
		{"unknown medium", []string{"--medium", "eth3"}, "unknown medium"},
		{"bad proto", []string{"--medium", "eth100", "--proto", "sctp"}, `invalid --proto "sctp": want one of`},
		{"payload too large", []string{"--medium", "eth100", "--payload", "65508"}, "too large"},
		{"tcp above mss", []string{"--medium", "eth100", "--proto", "tcp", "--payload", "1449"}, "too large"},
		{"bad list", []string{"--medium", "eth100", "--payload", "64,x"}, "invalid size"},
		{"bad range", []string{"--medium", "eth100", "--payload", "1518-64"}, "invalid range"},
		{"negative step", []string{"--medium", "eth100", "--payload", "64-128", "--step", "-1"}, "invalid --step"},
		{"huge range", []string{"--medium", "eth100", "--payload", "0-65000", "--step", "1"}, "rows"},
		{"frame too small", []string{"--medium", "eth100", "--frame", "10"}, "invalid frame size"},
		{"frame and payload", []string{"--medium", "eth100", "--frame", "64", "--payload", "64"}, "give one of them"},
		{"aggregate on ethernet", []string{"--medium", "eth100", "--aggregate", "2"}, "cannot aggregate"},
		{"aggregate zero", []string{"--medium", "usb2-eem", "--aggregate", "0"}, "invalid aggregation"},
		{"compare one medium", []string{"--compare", "eth100"}, "expected two media"},
		{"stray argument", []string{"--medium", "eth100", "usb2-eem"}, "unexpected argument"},
		{"bad mtu", []string{"--medium", "eth100", "--mtu", "20"}, "invalid MTU"},
		{"rtt without icmp", []string{"--medium", "eth100", "--rtt", "13ms"}, "--rtt"},
		{"bad custom", []string{"--medium", "custom:fast,1"}, "invalid custom medium"},
		{"measured not a rate", []string{"--medium", "eth100", "--measured", "fast"}, "--measured: invalid rate"},
		{"measured with compare", []string{"--compare", "eth100", "usb2-eem", "--measured", "83.6M"}, "leave out --compare"},
		{"measured with sizes", []string{"--medium", "eth100", "--payload", "64,1470", "--measured", "83.6M"}, "give one payload size"},
		{"measured echo", []string{"--medium", "eth100", "--proto", "icmp", "--measured", "83.6M"}, "--rtt"},
		{"measured empty payload", []string{"--medium", "eth100", "--proto", "raw", "--payload", "0", "--measured", "1M"}, "at least 1 byte"},
		{"unknown flag", []string{"--medium", "eth100", "--bogus"}, "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCalcArgs(t, tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tt.want) {
				t.Errorf("stdout %q, stderr %q; want one line with %q", out, errOut, tt.want)
			}
		})
	}
}
