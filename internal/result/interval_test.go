package result

import (
	"encoding/json"
	"testing"
)

// An interval that leaves lost or jitter_ms out without being marked a
// sender's (documents written before the mark) decodes with
// NoReceiverKeys; one that carries them, or is marked, does not.
func TestIntervalNoReceiverKeys(t *testing.T) {
	for _, c := range []struct {
		doc  string
		want bool
	}{
		{`{"start_s":0,"end_s":1,"lost":0,"jitter_ms":0}`, false},
		{`{"start_s":0,"end_s":1,"lost":3,"jitter_ms":0.5}`, false},
		{`{"start_s":0,"end_s":1}`, true},
		{`{"start_s":0,"end_s":1,"lost":0}`, true},
		{`{"start_s":0,"end_s":1,"lost":null,"jitter_ms":0}`, true},
		{`{"start_s":0,"end_s":1,"measured_by":"sender"}`, false},
	} {
		var in Interval
		if err := json.Unmarshal([]byte(c.doc), &in); err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		if in.NoReceiverKeys != c.want {
			t.Errorf("%s: NoReceiverKeys %v, want %v", c.doc, in.NoReceiverKeys, c.want)
		}
	}
	var in Interval
	if err := json.Unmarshal([]byte(`{"start_s":1,"end_s":2,"lost":3,"jitter_ms":0.5,"packets":7}`), &in); err != nil {
		t.Fatal(err)
	}
	if in.Lost != 3 || in.JitterMS != 0.5 || in.Packets != 7 || in.End != 2 {
		t.Errorf("decoded %+v", in)
	}
	// Written back, the flag leaves no trace.
	b, _ := json.Marshal(in)
	if string(b) != `{"start_s":1,"end_s":2,"bytes":0,"bits_per_second":0,"packets":7,"lost":3,"out_of_order":0,"duplicates":0,"jitter_ms":0.5}` {
		t.Errorf("written back as %s", b)
	}
}
