package pscheduler

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Two participants' run outputs of a UDP test, as RunThroughput writes
// them: participant 0 the client (sender), participant 1 the server.
const (
	clientOut = `{"succeeded":true,"diags":"client","intervals":[{"streams":[{"stream-id":1,"start":0,"end":1,"throughput-bits":1000,"throughput-bytes":125,"sent":1,"omitted":false}],"summary":{"start":0,"end":1,"throughput-bits":1000,"throughput-bytes":125,"sent":1,"omitted":false}}],"summary":{"streams":[{"stream-id":1,"start":0,"end":1,"throughput-bits":1000,"throughput-bytes":125,"receiver-throughput-bits":900,"sent":1,"lost":0,"jitter":0.1}],"summary":{"start":0,"end":1,"throughput-bits":1000,"throughput-bytes":125,"receiver-throughput-bits":900,"sent":1,"lost":0,"jitter":0.1}}}`
	serverOut = `{"succeeded":true,"diags":"server","intervals":[{"streams":[],"summary":{"start":0,"end":1,"throughput-bits":800,"throughput-bytes":100,"omitted":false}}],"summary":{"summary":{"start":0,"end":1,"throughput-bits":800,"throughput-bytes":100,"receiver-throughput-bits":800}}}`
	udpTest   = `{"type":"throughput","spec":{"dest":"192.0.2.1","udp":true}}`
)

func TestMergeThroughput(t *testing.T) {
	out := invoke(t, "merged-results", `{"test":`+udpTest+`,"results":[`+clientOut+`,`+serverOut+`]}`, Config{})
	r := mustSucceed(t, out)
	if *r.Summary.Summary.ThroughputBits != 1000 || *r.Summary.Summary.ReceiverThroughputBits != 900 {
		t.Errorf("merged summary is not participant 0's:\n%s", out)
	}
	if *r.Diags != "Participant 0:\nclient\n\nParticipant 1:\nserver" {
		t.Errorf("diags %q", *r.Diags)
	}
}

func TestMergeThroughputReverse(t *testing.T) {
	// In reverse participant 1 sent: its rate is the sender's.
	test := `{"type":"throughput","spec":{"dest":"192.0.2.1","reverse":true}}`
	receiver := `{"succeeded":true,"diags":"client","intervals":[],"summary":{"summary":{"start":0,"end":1,"throughput-bits":900,"throughput-bytes":112}}}`
	sender := `{"succeeded":true,"diags":"server","intervals":[],"summary":{"summary":{"start":0,"end":1,"throughput-bits":1000,"throughput-bytes":125,"retransmits":3}}}`
	out := invoke(t, "merged-results", `{"test":`+test+`,"results":[`+receiver+`,`+sender+`]}`, Config{})
	r := mustSucceedNoIntervals(t, out)
	s := r.Summary.Summary
	if *s.ThroughputBits != 1000 || *s.ReceiverThroughputBits != 900 || *s.Retransmits != 3 {
		t.Errorf("reverse merge:\n%s", out)
	}
}

// mustSucceedNoIntervals is mustSucceed for hand-made results without
// intervals.
func mustSucceedNoIntervals(t *testing.T, b []byte) schemaThroughputResult {
	t.Helper()
	r := checkThroughputResult(t, b)
	if !*r.Succeeded {
		t.Fatalf("failed:\n%s", b)
	}
	return r
}

func TestMergeThroughputFailures(t *testing.T) {
	// A missing participant 1 result still merges participant 0's.
	out := invoke(t, "merged-results", `{"test":`+udpTest+`,"results":[`+clientOut+`,null]}`, Config{})
	mustSucceed(t, out)
	// A failed participant 0 gives a failed result in the schema.
	out = invoke(t, "merged-results", `{"test":`+udpTest+`,"results":[{"succeeded":false,"error":"refused","diags":"x"},`+serverOut+`]}`, Config{})
	if r := checkThroughputResult(t, out); *r.Succeeded || *r.Error != "refused" {
		t.Errorf("failed merge:\n%s", out)
	}
	out = invoke(t, "merged-results", `{"test":`+udpTest+`,"results":[null,null]}`, Config{})
	if r := checkThroughputResult(t, out); *r.Succeeded {
		t.Errorf("no results merged into success:\n%s", out)
	}
	// The wrong number of results is an error, as with the iperf3 tool.
	bad := []string{
		`{"test":` + udpTest + `,"results":[` + clientOut + `]}`,
		`{"test":{"type":"throughput","spec":{"dest":"x","single-ended":true}},"results":[` + clientOut + `,` + serverOut + `]}`,
		`{"test":{"type":"rtt","spec":{"dest":"x"}},"results":[]}`,
		`{"test":{"type":"latency","spec":{}},"results":[{}]}`,
	}
	for _, in := range bad {
		if err := Invoke(context.Background(), "merged-results", strings.NewReader(in), &bytes.Buffer{}, Config{}); err == nil {
			t.Errorf("merged %s", in)
		}
	}
	single := invoke(t, "merged-results", `{"test":{"type":"throughput","spec":{"dest":"x","single-ended":true}},"results":[`+clientOut+`]}`, Config{})
	mustSucceed(t, single)
}

func TestMergeRTT(t *testing.T) {
	run := `{"schema":1,"succeeded":true,"diags":"d","roundtrips":[{"ip":"127.0.0.1","length":64,"rtt":"PT0.000016S","seq":1}],"sent":2,"received":1,"lost":1,"reorders":0,"duplicates":0,"loss":0.5,"min":"PT0.000016S","max":"PT0.000016S","mean":"PT0.000016S","stddev":"PT0S"}`
	out := invoke(t, "merged-results", `{"test":{"type":"rtt","spec":{"dest":"127.0.0.1"}},"results":[`+run+`]}`, Config{})
	r := checkRTTResult(t, out)
	if !*r.Succeeded || *r.Loss != 0.5 || len(*r.Roundtrips) != 1 || *r.Lost != 1 {
		t.Errorf("merged rtt:\n%s", out)
	}
	out = invoke(t, "merged-results", `{"test":{"type":"rtt","spec":{"dest":"127.0.0.1"}},"results":[null]}`, Config{})
	if r := checkRTTResult(t, out); *r.Succeeded || r.Loss != nil {
		t.Errorf("no result merged into:\n%s", out)
	}
}
