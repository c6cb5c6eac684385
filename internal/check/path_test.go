package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return withDerived(v)
}

const matrixDoc = `{"schema":"wirebench/1","kind":"matrix","cells":[
 {"protocol":"tcp","direction":"upload","bits_per_second":94.1e6,"loss_percent":null},
 {"protocol":"udp","direction":"upload","bits_per_second":95.7e6,"loss_percent":0.25,
  "result":{"kind":"test","test":{"protocol":"udp"},"receiver":{"bits_per_second":95.7e6,"packets":996,"lost":4,"total":1000}}}]}`

func TestLookup(t *testing.T) {
	doc := decode(t, matrixDoc)
	for path, want := range map[string]float64{
		"cells[protocol=udp,direction=upload].bits_per_second":                 95.7e6,
		"cells[direction=upload,protocol=tcp].bits_per_second":                 94.1e6,
		"cells.1.loss_percent":                                                 0.25,
		"cells[protocol=udp].result.receiver.loss_percent":                     0.4, // derived: 4 of 1000
		"cells[protocol=udp,direction=upload].result.receiver.bits_per_second": 95.7e6,
	} {
		got, err := Lookup(doc, path)
		if err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", path, got, err, want)
		}
	}
}

// TestLookupUnknownPath: an unknown figure is an error that names the
// valid figures nearest to it.
func TestLookupUnknownPath(t *testing.T) {
	doc := decode(t, matrixDoc)
	for _, tc := range []struct{ path, why, near string }{
		{"cells[protocol=udp,direction=upload].bits_per_secnd", `no key "bits_per_secnd"`, "udp.upload.bits_per_second"},
		{"udp.upload.bits_per_secnd", `short for "cells[protocol=udp,direction=upload].bits_per_secnd"`, "udp.upload.bits_per_second"},
		{"udp.uplaod.bits_per_second", `no key "udp"`, "udp.upload.bits_per_second"},
		{"sctp.upload.bits_per_second", "matches 0 elements", "udp.upload.bits_per_second"},
		{"cells[protocol=sctp].bits_per_second", "matches 0 elements", "tcp.upload.bits_per_second"},
		{"cells[direction=upload].bits_per_second", "matches 2 elements", "bits_per_second"},
		{"cells.0.loss_percent", "null in this run", ""}, // ErrNull: an ERROR verdict, not a plan error
		{"cells", "is a array, not a number", ""},
		{"cells..x", "empty step", ""},
	} {
		_, err := Lookup(doc, tc.path)
		if err == nil {
			t.Errorf("%s: no error", tc.path)
			continue
		}
		if !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s: %q does not say %q", tc.path, err, tc.why)
		}
		var pe *PathError
		if tc.near != "" && (!errors.As(err, &pe) || !strings.Contains(strings.Join(pe.Near, " "), tc.near)) {
			t.Errorf("%s: %q does not name %q among the figures near it", tc.path, err, tc.near)
		}
	}
}
