package sweep

import (
	"slices"
	"testing"

	"github.com/wirebench/wirebench/internal/linerate"
)

func TestSweepSizes(t *testing.T) {
	eth, _ := linerate.LookupMedium("eth100")
	for in, want := range map[string][]int{
		"rfc2544":       {18, 82, 210, 466, 978, 1234, 1472},
		"64-200:64":     {64, 128, 192, 200},
		"1470,64,512":   {64, 512, 1470},
		"1262-1263":     {1262, 1263},
		"100, 100 ,200": {100, 200},
	} {
		got, err := ParseSizes(in, eth)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "10", "64-32", "64-100:0", "70000", "1-100000"} {
		if got, err := ParseSizes(bad, eth); err == nil {
			t.Errorf("%q accepted as %v", bad, got)
		}
	}
}

// FuzzSweepSizes: whatever --sizes holds, the parser returns an error or
// an ascending list of distinct sizes a UDP datagram can have, at most
// 1001 of them (a range's last step plus its end).
func FuzzSweepSizes(f *testing.F) {
	for _, s := range []string{"rfc2544", "64-1472:64", "1262,1263", "1-", "-5", "64-100:", "9999999999999999999999"} {
		f.Add(s)
	}
	eth, _ := linerate.LookupMedium("eth1g")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSizes(s, eth)
		if err != nil {
			return
		}
		if len(got) == 0 || len(got) > 1002 {
			t.Fatalf("%q: %d sizes", s, len(got))
		}
		for i, v := range got {
			if v < 16 || v > 65507 || (i > 0 && v <= got[i-1]) {
				t.Fatalf("%q: %v", s, got)
			}
		}
	})
}
