package result

import (
	"encoding/json"
	"testing"
	"time"
)

// TestPingRTTJSONRoundTrip: the milliseconds a result is saved with decode
// back to the very durations it printed (show re-prints a saved run).
func TestPingRTTJSONRoundTrip(t *testing.T) {
	in := PingRTT{Min: 1, Avg: 12_345_678, Max: 3*time.Second + 7, Mdev: 999_999, P50: 53_001, P90: 110_017, P99: 185_123}
	b, err := json.Marshal(PingSize{Size: 56, RTT: in})
	if err != nil {
		t.Fatal(err)
	}
	var out PingSize
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.RTT != in {
		t.Errorf("decoded %+v from %s, want %+v", out.RTT, b, in)
	}
	if err := json.Unmarshal([]byte(`{"rtt_ms":{"avg":"slow"}}`), &out); err == nil {
		t.Error("a non-number RTT decoded without an error")
	}
}
