package htmlreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// The views below are the keys charts read; see docs/json.md.

type interval struct {
	Start float64 `json:"start_s"`
	End   float64 `json:"end_s"`
	BPS   float64 `json:"bits_per_second"`
	Flow  string  `json:"flow"`
	// MeasuredBy is "sender" on the intervals of a flow this side sent.
	MeasuredBy string `json:"measured_by"`
}

type flowFigures struct {
	BPS       float64    `json:"bits_per_second"`
	Bytes     int64      `json:"bytes"`
	Lost      int64      `json:"lost"`
	Packets   int64      `json:"packets"`
	JitterMS  float64    `json:"jitter_ms"`
	Seconds   float64    `json:"seconds"`
	Intervals []interval `json:"intervals"`
}

type testView struct {
	Role string `json:"role"`
	Test struct {
		Protocol  string  `json:"protocol"`
		Direction string  `json:"direction"`
		Dialect   string  `json:"dialect"`
		Host      string  `json:"host"`
		Port      int     `json:"port"`
		Length    int     `json:"length"`
		RateBPS   float64 `json:"rate_bps"`
		Duration  float64 `json:"duration_s"`
		Omit      float64 `json:"omit_s"`
	} `json:"test"`
	Intervals []interval   `json:"intervals"`
	Sender    *flowFigures `json:"sender"`
	Receiver  *flowFigures `json:"receiver"`
	Reverse   *struct {
		Direction string       `json:"direction"`
		Receiver  *flowFigures `json:"receiver"`
		Intervals []interval   `json:"intervals"`
	} `json:"reverse"`
	Link *struct {
		Medium         string  `json:"medium"`
		TheoreticalBPS float64 `json:"theoretical_bps"`
		Percent        float64 `json:"percent_of_theoretical"`
		Status         string  `json:"status"`
	} `json:"link"`
	Warnings []string `json:"warnings"`
	Error    string   `json:"error"`
}

// goodput is the test's headline figure: what the receiver counted, else
// what was sent.
func (t *testView) goodput() (float64, string) {
	switch {
	case t.Receiver != nil && t.Receiver.BPS > 0:
		return t.Receiver.BPS, "received"
	case t.Sender != nil && t.Sender.BPS > 0:
		return t.Sender.BPS, "sent"
	}
	return 0, ""
}

type cellView struct {
	Protocol      string         `json:"protocol"`
	Direction     string         `json:"direction"`
	Simultaneous  bool           `json:"simultaneous"`
	Method        string         `json:"method"`
	BPS           *float64       `json:"bits_per_second"`
	LossPercent   *float64       `json:"loss_percent"`
	JitterMS      *float64       `json:"jitter_ms"`
	PercentOfLine *float64       `json:"percent_of_line"`
	Basis         string         `json:"basis"`
	Status        string         `json:"status"`
	Reason        string         `json:"reason"`
	Result        *testView      `json:"result"`
	Latency       *underLoadView `json:"latency"`
}

func (c cellView) name() string {
	n := c.Protocol + " " + c.Direction
	if c.Simultaneous {
		n += " (bidir)"
	}
	return n
}

type matrixView struct {
	Host     string     `json:"host"`
	Port     int        `json:"port"`
	Dialect  string     `json:"dialect"`
	Medium   string     `json:"medium"`
	Cells    []cellView `json:"cells"`
	Warnings []string   `json:"warnings"`
	Error    string     `json:"error"`
}

type bin struct {
	From  float64 `json:"from_ms"`
	To    float64 `json:"to_ms"`
	Count int64   `json:"count"`
}

type rttSummary struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min_ms"`
	P50   float64 `json:"p50_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
	Bins  []bin   `json:"bins"`
}

type latencyView struct {
	Test struct {
		Proto string `json:"proto"`
		Peer  string `json:"peer"`
	} `json:"test"`
	RTT      rttSummary `json:"rtt"`
	Warnings []string   `json:"warnings"`
	Error    string     `json:"error"`
}

type underLoadView struct {
	Probe struct {
		Proto string `json:"proto"`
		Peer  string `json:"peer"`
	} `json:"probe"`
	Idle struct {
		RTT rttSummary `json:"rtt"`
	} `json:"idle"`
	Loaded struct {
		RTT rttSummary `json:"rtt"`
	} `json:"loaded"`
	Throughput *testView `json:"throughput"`
	Warnings   []string  `json:"warnings"`
	Error      string    `json:"error"`
}

type pingView struct {
	Target string `json:"target"`
	Sizes  []struct {
		Size     int     `json:"size"`
		Sent     int64   `json:"sent"`
		Received int64   `json:"received"`
		LossPct  float64 `json:"loss_pct"`
		RTT      *struct {
			Min float64 `json:"min"`
			Avg float64 `json:"avg"`
			Max float64 `json:"max"`
			P50 float64 `json:"p50"`
			P90 float64 `json:"p90"`
			P99 float64 `json:"p99"`
		} `json:"rtt_ms"`
	} `json:"sizes"`
	Warnings []string `json:"warnings"`
}
