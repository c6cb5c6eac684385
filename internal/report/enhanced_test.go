package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// TestEnhancedTCP: with -e a TCP sender's interval and summary lines carry
// retransmits, cwnd and RTT(var) under aligned headers, and the summary the
// MSS; figures the system did not give read n/a, never 0; without -e the
// lines are unchanged; a receiver's lines never gain the columns.
func TestEnhancedTCP(t *testing.T) {
	info := &result.TCPInfo{Retransmits: 3, CwndBytes: 64 << 10, RTTMicros: 812, RTTVarMicros: 40, MSS: 1448, PMTU: 1500}
	in := result.Interval{Start: 0, End: 1, Bytes: 11768320, BitsPerSecond: 94146560, TCP: info}
	r := &result.Result{Test: result.Test{Protocol: result.TCP},
		Sender: &result.Sender{Bytes: 23536640, BitsPerSecond: 94146560, Seconds: 2, TCP: info}}

	var plain, enh bytes.Buffer
	p := NewText(&plain, "1")
	p.Interval("1", in, false, false)
	e := NewText(&enh, "1")
	e.SetEnhanced(true)
	e.Interval("1", in, false, false)
	bare := in
	bare.TCP = nil
	e.Interval("1", bare, false, false)
	e.Interval("1", in, false, true) // receiving: no -e columns
	e.Summary(r)

	if strings.Contains(plain.String(), "Retr") || strings.Contains(plain.String(), "812") {
		t.Errorf("without -e the TCP columns appear:\n%s", plain.String())
	}
	lines := strings.Split(enh.String(), "\n")
	t.Logf("\n%s", enh.String())
	if !strings.Contains(lines[0], "Retr") || !strings.Contains(lines[0], "Cwnd") || !strings.Contains(lines[0], "RTT(var)") {
		t.Fatalf("header %q", lines[0])
	}
	if f := strings.Fields(lines[1]); len(f) < 12 || f[8] != "3" || f[9] != "64K" || f[10] != "812(40)" {
		t.Errorf("interval line %q: want retransmits 3, cwnd 64K, RTT 812(40) us", lines[1])
	}
	if f := strings.Fields(lines[2]); len(f) < 11 || f[8] != "n/a" || f[9] != "n/a" || f[10] != "n/a" {
		t.Errorf("interval without TCP_INFO %q: want n/a", lines[2])
	}
	for _, word := range []string{"Retr", "Cwnd", "RTT(var)"} {
		end := strings.Index(lines[0], word) + len(word)
		for _, l := range lines[1:3] {
			if end > len(l) || l[end-1] == ' ' || end < len(l) && l[end] != ' ' {
				t.Errorf("%q column misaligned:\n%s\n%s", word, lines[0], l)
			}
		}
	}
	if !strings.Contains(enh.String(), "MSS 1448, path MTU 1500") || !strings.Contains(enh.String(), "812(40) us  sender") {
		t.Errorf("summary lacks the sender's TCP figures:\n%s", enh.String())
	}
	// lines[3] is the receive side's own header, lines[4] its line.
	if len(lines) < 5 || strings.Contains(lines[3], "Retr") || strings.Contains(lines[4], "n/a") {
		t.Errorf("receiving interval with -e columns:\n%s", enh.String())
	}
}

// TestTCPInfoJSON: the tcp object appears where known and is absent, not
// zero, where not.
func TestTCPInfoJSON(t *testing.T) {
	r := result.New("client")
	r.Intervals = []result.Interval{{End: 1, TCP: &result.TCPInfo{MSS: 1448, CwndBytes: 1}}, {Start: 1, End: 2}}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r, false); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Intervals []map[string]json.RawMessage `json:"intervals"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Intervals[0]["tcp"]; !ok {
		t.Errorf("interval with TCP_INFO has no tcp key: %s", buf.String())
	}
	if _, ok := doc.Intervals[1]["tcp"]; ok {
		t.Errorf("interval without TCP_INFO has a tcp key: %s", buf.String())
	}
}
