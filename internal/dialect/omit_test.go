package dialect

import (
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
)

// TestOmitValidate: -O is whole seconds, at most iperf3's 60, and only for
// a timed test.
func TestOmitValidate(t *testing.T) {
	for _, tc := range []struct {
		omit  time.Duration
		bytes int64
		ok    bool
	}{{0, 0, true}, {time.Second, 0, true}, {60 * time.Second, 0, true}, {61 * time.Second, 0, false},
		{-time.Second, 0, false}, {1500 * time.Millisecond, 0, false}, {time.Second, 1 << 20, false}} {
		for _, dialect := range []string{session.DialectIperf2, session.DialectIperf3} {
			_, err := Prepare(session.ClientConfig{Host: "127.0.0.1", Dialect: dialect, Omit: tc.omit, Bytes: tc.bytes})
			if (err == nil) != tc.ok {
				t.Errorf("%s -O %v -n %d: err %v, want ok=%v", dialect, tc.omit, tc.bytes, err, tc.ok)
			}
			if err != nil && !session.IsConfigError(err) {
				t.Errorf("%s -O %v: %v is not a ConfigError", dialect, tc.omit, err)
			}
		}
	}
}
