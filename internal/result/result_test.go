package result

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestIntervalJSON (issue 19, point 4): a sender's interval carries no
// receiver figures (no lost 0 or jitter_ms 0 nobody measured); a
// receiver's carries them, zeros included; either reads back the same.
func TestIntervalJSON(t *testing.T) {
	snd := Interval{Start: 0, End: 1, Bytes: 1470, BitsPerSecond: 11760, Packets: 1, MeasuredBy: MeasuredBySender}
	rcv := Interval{Start: 0, End: 1, Bytes: 1470, BitsPerSecond: 11760, Packets: 1}
	b, err := json.Marshal(snd)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"lost"`, `"out_of_order"`, `"duplicates"`, `"jitter_ms"`} {
		if strings.Contains(string(b), k) {
			t.Errorf("sender interval %s carries %s", b, k)
		}
	}
	if !strings.Contains(string(b), `"measured_by":"sender"`) || !strings.Contains(string(b), `"packets":1`) {
		t.Errorf("sender interval %s", b)
	}
	var back Interval
	if err := json.Unmarshal(b, &back); err != nil || back != snd {
		t.Errorf("read back %+v (%v), want %+v", back, err, snd)
	}
	b, _ = json.Marshal(rcv)
	for _, k := range []string{`"lost":0`, `"jitter_ms":0`, `"duplicates":0`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("receiver interval %s lacks %s", b, k)
		}
	}
}
