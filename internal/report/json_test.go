package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wirebench/wirebench/internal/result"
)

// TestJSONRoundTrip decodes each document back into a result.Result and
// expects what was encoded.
func TestJSONRoundTrip(t *testing.T) {
	for _, sc := range scenarios() {
		if sc.name == "guards" { // NaN cannot round-trip; result.TestSanitizeEveryFloat covers it
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			var got result.Result
			if err := json.Unmarshal([]byte(renderJSON(t, sc)), &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(sc.r, &got); d != "" {
				t.Errorf("decoded result differs (-want +got):\n%s", d)
			}
		})
	}
}

// contractKeys are the keys issue 2 item 4 promises other tools.
var contractKeys = []string{
	"schema",
	"test.protocol", "test.direction", "test.dialect", "test.host", "test.port", "test.duration_s", "test.rate_bps",
	"test.length", "test.streams",
	"intervals[0].start_s", "intervals[0].end_s", "intervals[0].bytes", "intervals[0].bits_per_second",
	"intervals[0].packets", "intervals[0].lost", "intervals[0].out_of_order", "intervals[0].jitter_ms",
	"sender.bytes", "sender.bits_per_second", "sender.packets",
	"receiver.bytes", "receiver.bits_per_second", "receiver.packets", "receiver.lost", "receiver.out_of_order",
	"receiver.jitter_ms",
	"warnings",
}

// lookup follows a path like "intervals[0].bytes" through decoded JSON.
func lookup(doc any, path string) (any, bool) {
	cur := doc
	for _, part := range strings.Split(path, ".") {
		key, idx, isIndex := strings.Cut(strings.TrimSuffix(part, "]"), "[")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[key]; !ok {
			return nil, false
		}
		if isIndex {
			arr, ok := cur.([]any)
			if !ok || idx != "0" || len(arr) == 0 {
				return nil, false
			}
			cur = arr[0]
		}
	}
	return cur, true
}

func TestContractKeys(t *testing.T) {
	for _, sc := range []scenario{udpClientPeerReport(), serverReceive(), guards()} {
		if sc.name == "server-receive" {
			sc.r.Sender = &result.Sender{} // a UDP result whose side also sent
		}
		t.Run(sc.name, func(t *testing.T) {
			var doc any
			if err := json.Unmarshal([]byte(renderJSON(t, sc)), &doc); err != nil {
				t.Fatal(err)
			}
			for _, k := range contractKeys {
				if _, ok := lookup(doc, k); !ok {
					t.Errorf("contract key %q missing", k)
				}
			}
			// duplicates is there when counted, and absent (unknown)
			// from a peer report that carries none (issue 19).
			_, dups := lookup(doc, "receiver.duplicates")
			if want := sc.r.Receiver.Duplicates != nil; dups != want {
				t.Errorf("receiver.duplicates present %v, want %v (counted: %v)", dups, want, want)
			}
			if v, _ := lookup(doc, "schema"); v != "wirebench/1" {
				t.Errorf("schema = %v, want wirebench/1", v)
			}
			if v, _ := lookup(doc, "warnings"); reflect.TypeOf(v) != reflect.TypeOf([]any{}) {
				t.Errorf("warnings is %T, want an array", v)
			}
		})
	}
}

// TestEmptyListsAreArrays: a Result not made by result.New still gives
// arrays, never null, for the contract lists, and gets the schema.
func TestEmptyListsAreArrays(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, &result.Result{Role: "server"}, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"intervals":[]`, `"warnings":[]`, `"schema":"wirebench/1"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("%s lacks %s", buf.String(), want)
		}
	}
}

// TestWriteJSONLeavesInputAlone: the document is written from a
// sanitised copy; the caller's result keeps its NaN and its warnings.
func TestWriteJSONLeavesInputAlone(t *testing.T) {
	sc := guards()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sc.r, true); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(sc.r.Receiver.BitsPerSecond) || len(sc.r.Warnings) != 0 {
		t.Errorf("WriteJSON changed its input: bps %v, warnings %q", sc.r.Receiver.BitsPerSecond, sc.r.Warnings)
	}
	if err := WriteJSON(&buf, nil, true); err == nil {
		t.Error("WriteJSON(nil) succeeded")
	}
}

// TestJSONLines: a server's compact documents are one line each, even with
// newlines inside strings.
func TestJSONLines(t *testing.T) {
	var buf bytes.Buffer
	a, b := serverReceive().r, link().r
	a.Warn("two\nlines")
	for _, r := range []*result.Result{a, b} {
		if err := WriteJSON(&buf, r, false); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var r result.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %d is not a document: %v", n+1, err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d lines, want 2", n)
	}
}

// TestDocExample keeps the examples in docs/json.md equal to what the
// renderer writes.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "json.md"))
	if err != nil {
		t.Fatalf("reading docs/json.md: %v", err)
	}
	for _, sc := range []scenario{udpClientPeerReport(), serverReceive()} {
		if !strings.Contains(string(doc), "\n"+renderJSON(t, sc)+"```") {
			t.Errorf("docs/json.md lacks the current %s document; copy testdata/%s.json into it", sc.name, sc.name)
		}
	}
}
