package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestLoopbackJSONOneDocument: loopback --json prints exactly one JSON
// document (schema wirebench/1, kind loopback) holding the TCP and the UDP
// test results.
func TestLoopbackJSONOneDocument(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"loopback", "--json", "-t", "0.3", "-b", "10M"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	dec := json.NewDecoder(strings.NewReader(out.String()))
	var doc struct {
		Schema, Kind string
		Tests        []struct {
			Schema, Kind string
			Test         struct{ Protocol string }
		}
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		t.Errorf("more than one JSON document (%v):\n%s", err, out.String())
	}
	if doc.Schema != "wirebench/1" || doc.Kind != "loopback" || len(doc.Tests) != 2 ||
		doc.Tests[0].Test.Protocol != "tcp" || doc.Tests[1].Test.Protocol != "udp" ||
		doc.Tests[0].Kind != "test" || doc.Tests[1].Schema != "wirebench/1" {
		t.Errorf("document %+v", doc)
	}
}
