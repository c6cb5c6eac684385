package htmlreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wirebench/wirebench/internal/result"
)

// Schema is the schema every document must carry.
const Schema = "wirebench/1"

// Document is one decoded wirebench JSON document.
type Document struct {
	// Name labels the document in the page: a file name, a run id.
	Name string
	// Kind is the document's "kind" ("test", "matrix", "sweep", "ping",
	// "request-response", "under-load", …).
	Kind string
	// Role is a test's "role" ("client" or "server"); empty otherwise.
	Role string
	// Labels are the labels of a run from the results store (nil for a
	// file): the comparison names each run by the labels that tell it
	// from the others.
	Labels map[string]string
	// Run is a saved run's id as "run 12" (empty for a file).
	Run string
	// Tree is the whole document, decoded (numbers as json.Number).
	Tree map[string]any
	raw  json.RawMessage
}

// Decode reads one wirebench JSON document. It fails, saying why, on
// anything that is not a JSON object of schema wirebench/1 with a kind.
func Decode(name string, data []byte) (Document, error) {
	d := Document{Name: name}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&d.Tree); err != nil {
		return d, fmt.Errorf("%s: not a JSON object: %w", name, err)
	}
	if dec.More() {
		return d, fmt.Errorf("%s: more than one JSON document: give each its own file", name)
	}
	schema, _ := d.Tree["schema"].(string)
	if schema != Schema {
		return d, fmt.Errorf("%s: schema %q, want %q (a wirebench --json document)", name, schema, Schema)
	}
	d.Kind, _ = d.Tree["kind"].(string)
	if d.Kind == "" {
		return d, errors.New(name + ": the document has no \"kind\"")
	}
	d.Role, _ = d.Tree["role"].(string)
	d.raw = append(json.RawMessage(nil), data...)
	return d, nil
}

// view decodes the document into v (the keys a chart needs).
func (d Document) view(v any) error {
	if err := json.Unmarshal(d.raw, v); err != nil {
		return fmt.Errorf("%s: reading the %s document: %w", d.Name, d.Kind, err)
	}
	return nil
}

// goodput is the test's headline figure: what the receiver counted, else
// what was sent.
func goodput(t *result.Result) (float64, string) {
	switch {
	case t.Receiver != nil && t.Receiver.BitsPerSecond > 0:
		return t.Receiver.BitsPerSecond, "received"
	case t.Sender != nil && t.Sender.BitsPerSecond > 0:
		return t.Sender.BitsPerSecond, "sent"
	}
	return 0, ""
}
