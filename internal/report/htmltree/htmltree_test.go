package htmltree

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every number appears as the document wrote it, a list of objects as a
// table with a column per key, and every text escaped.
func TestHTMLKeepsNumbersAsWritten(t *testing.T) {
	dec := json.NewDecoder(strings.NewReader(`{"rate": 94.120000, "cells": [{"a": 1e3}, {"b": "<x>"}], "none": null}`))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	got := string(HTML(v))
	for _, want := range []string{"<td>94.120000</td>", "<th>a</th><th>b</th>", "<td>1e3</td>", "&lt;x&gt;", "<td>null</td>"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}
