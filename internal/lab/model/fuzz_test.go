package model

import (
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary model strings to Parse: it must never panic,
// every error is one line, and an accepted model runs a few datagrams
// without panicking and with releases in time order.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"loss=1%,reorder=0.5%,dup=0.1%,seed=7", "service=5000,buffer=2524", "tick=1ms/7",
		"rate=100mbit,overhead=usb-eem,queue=5ms", "burst=100/10/50%", "max=3000", "delay=20ms,jitter=2ms", "loss=2", "a=b=c,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := Parse(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		m := New(sp, sp.Seed)
		var rs []Release
		last := time.Duration(0)
		for i := range 200 {
			now := time.Duration(i) * 50 * time.Microsecond
			rs = m.Expire(rs[:0], now)
			rs, _, _ = m.Arrive(rs, now, uint64(i), 1+i*37%9000, i%50 != 49)
			for _, r := range rs {
				if r.At < last {
					t.Fatalf("release at %v after %v", r.At, last)
				}
				last = r.At
			}
		}
	})
}
