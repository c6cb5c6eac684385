package pscheduler

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"regexp"
	"testing"
)

// The structs below mirror pScheduler's result schemas
// (pscheduler-test-throughput/throughput/validate.py RESULT_SCHEMA and
// pscheduler-test-rtt/rtt/validate.py result_is_valid), written apart from
// the package's own types so that a field the package gets wrong cannot
// agree with itself. Decoding uses DisallowUnknownFields: the throughput
// schema has additionalProperties false at the top and in throughput-data.
// Integer-typed fields are int64, so a fractional number fails to decode.

type schemaThroughputData struct {
	ThroughputBits         *float64         `json:"throughput-bits"`
	ThroughputBytes        *float64         `json:"throughput-bytes"`
	ReceiverThroughputBits *float64         `json:"receiver-throughput-bits"`
	Sent                   *int64           `json:"sent"`
	Lost                   *int64           `json:"lost"`
	Jitter                 *float64         `json:"jitter"`
	StreamID               *json.RawMessage `json:"stream-id"` // string or integer
	Start                  *float64         `json:"start"`
	End                    *float64         `json:"end"`
	RTT                    *float64         `json:"rtt"`
	TCPWindowSize          *int64           `json:"tcp-window-size"`
	Retransmits            *int64           `json:"retransmits"`
	Omitted                *bool            `json:"omitted"`
}

type schemaThroughputResult struct {
	Schema                 *int64  `json:"schema"`
	Succeeded              *bool   `json:"succeeded"`
	Error                  *string `json:"error"`
	Diags                  *string `json:"diags"`
	MSS                    *int64  `json:"mss"`
	MTU                    *int64  `json:"mtu"`
	TCPWindowSize          *int64  `json:"tcp-window-size"`
	RequestedTCPWindowSize *int64  `json:"requested-tcp-window-size"`
	Intervals              *[]struct {
		Streams *[]schemaThroughputData `json:"streams"`
		Summary *schemaThroughputData   `json:"summary"`
	} `json:"intervals"`
	Summary *struct {
		Streams *[]schemaThroughputData `json:"streams"`
		Summary *schemaThroughputData   `json:"summary"`
	} `json:"summary"`
}

type schemaRoundtrip struct {
	IP     *string `json:"ip"`
	Length *int64  `json:"length"`
	RTT    *string `json:"rtt"`
	TTL    *int64  `json:"ttl"`
	Seq    *int64  `json:"seq"`
	Error  *string `json:"error"`
}

type schemaRTTResult struct {
	Schema     *int64             `json:"schema"`
	Succeeded  *bool              `json:"succeeded"`
	Error      *string            `json:"error"`
	Diags      *string            `json:"diags"`
	Roundtrips *[]schemaRoundtrip `json:"roundtrips"`
	Sent       *int64             `json:"sent"`
	Received   *int64             `json:"received"`
	Lost       *int64             `json:"lost"`
	Reorders   *int64             `json:"reorders"`
	Duplicates *int64             `json:"duplicates"`
	Loss       *float64           `json:"loss"`
	Min        *string            `json:"min"`
	Max        *string            `json:"max"`
	Mean       *string            `json:"mean"`
	Stddev     *string            `json:"stddev"`
}

// pScheduler's Duration pattern (jsonval.py).
var schemaDuration = regexp.MustCompile(`^P(?:\d+(?:\.\d+)?W)?(?:\d+(?:\.\d+)?D)?(?:T(?:\d+(?:\.\d+)?H)?(?:\d+(?:\.\d+)?M)?(?:\d+(?:\.\d+)?S)?)?$`)

// pScheduler's icmp-error enumeration (jsonval.py).
var schemaICMPErrors = words("net-unreachable host-unreachable protocol-unreachable port-unreachable fragmentation-needed-and-df-set source-route-failed destination-network-unknown destination-host-unknown source-host-isolated destination-network-administratively-prohibited destination-host-administratively-prohibited network-unreachable-for-type-of-service icmp-destination-host-unreachable-tos communication-administratively-prohibited host-precedence-violation precedence-cutoff-in-effect")

// strictDecode decodes b into v, failing on any field v does not have.
func strictDecode(t *testing.T, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("result does not match the schema: %v\n%s", err, b)
	}
}

// checkThroughputResult checks b against the throughput result schema and
// returns it decoded. A succeeded result must carry the required fields.
func checkThroughputResult(t *testing.T, b []byte) schemaThroughputResult {
	t.Helper()
	var r schemaThroughputResult
	strictDecode(t, b, &r)
	// Required whether the run succeeded or not.
	if r.Succeeded == nil || r.Diags == nil || r.Intervals == nil || r.Summary == nil {
		t.Fatalf("required field of succeeded, diags, intervals, summary missing:\n%s", b)
	}
	for i, in := range *r.Intervals {
		if in.Summary == nil || in.Streams == nil {
			t.Fatalf("interval %d lacks streams or summary:\n%s", i, b)
		}
		checkData(t, "interval summary", *in.Summary)
		for _, s := range *in.Streams {
			checkData(t, "interval stream", s)
		}
	}
	if r.Summary.Summary == nil {
		if *r.Succeeded {
			t.Fatalf("succeeded result without summary.summary:\n%s", b)
		}
		return r
	}
	checkData(t, "summary", *r.Summary.Summary)
	return r
}

// checkData checks the figures every throughput-data of ours carries.
func checkData(t *testing.T, what string, d schemaThroughputData) {
	t.Helper()
	if d.ThroughputBits == nil || d.Start == nil || d.End == nil {
		t.Fatalf("%s lacks throughput-bits, start or end", what)
	}
	if *d.ThroughputBits < 0 || *d.End < *d.Start {
		t.Fatalf("%s: throughput-bits %v, start %v, end %v", what, *d.ThroughputBits, *d.Start, *d.End)
	}
	if d.StreamID != nil {
		var n int64
		var s string
		if json.Unmarshal(*d.StreamID, &n) != nil && json.Unmarshal(*d.StreamID, &s) != nil {
			t.Fatalf("%s: stream-id %s is neither integer nor string", what, *d.StreamID)
		}
	}
}

// checkRTTResult checks b against the rtt result schema.
func checkRTTResult(t *testing.T, b []byte) schemaRTTResult {
	t.Helper()
	var r schemaRTTResult
	strictDecode(t, b, &r)
	if r.Succeeded == nil {
		t.Fatalf("required field succeeded missing:\n%s", b)
	}
	if !*r.Succeeded {
		return r
	}
	if r.Roundtrips == nil || r.Loss == nil {
		t.Fatalf("required field roundtrips or loss missing:\n%s", b)
	}
	if *r.Loss < 0 || *r.Loss > 1 {
		t.Fatalf("loss %v is not a probability", *r.Loss)
	}
	for _, d := range []*string{r.Min, r.Max, r.Mean, r.Stddev} {
		if d != nil && !schemaDuration.MatchString(*d) {
			t.Fatalf("%q is not a pScheduler Duration", *d)
		}
	}
	for _, c := range []*int64{r.Sent} {
		if c != nil && *c < 1 {
			t.Fatalf("sent %d is not a Cardinal", *c)
		}
	}
	for _, c := range []*int64{r.Received, r.Lost, r.Reorders, r.Duplicates} {
		if c != nil && *c < 0 {
			t.Fatalf("count %d is not a CardinalZero", *c)
		}
	}
	for i, rt := range *r.Roundtrips {
		checkRoundtrip(t, i, rt)
	}
	return r
}

func checkRoundtrip(t *testing.T, i int, rt schemaRoundtrip) {
	t.Helper()
	if rt.IP != nil {
		if _, err := netip.ParseAddr(*rt.IP); err != nil {
			t.Fatalf("roundtrip %d: ip %q: %v", i, *rt.IP, err)
		}
	}
	if rt.RTT != nil && !schemaDuration.MatchString(*rt.RTT) {
		t.Fatalf("roundtrip %d: rtt %q is not a Duration", i, *rt.RTT)
	}
	for _, c := range []*int64{rt.Length, rt.TTL, rt.Seq} {
		if c != nil && *c < 1 {
			t.Fatalf("roundtrip %d: %d is not a Cardinal", i, *c)
		}
	}
	if rt.Error != nil && !schemaICMPErrors[*rt.Error] {
		t.Fatalf("roundtrip %d: error %q is not an icmp-error", i, *rt.Error)
	}
}

// TestSchemaCheckRejects makes sure the strict decoding above fails on
// what the schemas forbid, so that the tests using it can fail.
func TestSchemaCheckRejects(t *testing.T) {
	bad := map[string]string{
		"extra top-level field":     `{"succeeded":true,"diags":"","intervals":[],"summary":{"summary":{"start":0,"end":1,"throughput-bits":1}},"bogus":1}`,
		"extra throughput-data key": `{"succeeded":true,"diags":"","intervals":[],"summary":{"summary":{"start":0,"end":1,"throughput-bits":1,"bits_per_second":1}}}`,
		"fractional retransmits":    `{"succeeded":true,"diags":"","intervals":[],"summary":{"summary":{"start":0,"end":1,"throughput-bits":1,"retransmits":1.5}}}`,
		"string throughput-bits":    `{"succeeded":true,"diags":"","intervals":[],"summary":{"summary":{"start":0,"end":1,"throughput-bits":"1M"}}}`,
	}
	for name, doc := range bad {
		var r schemaThroughputResult
		dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
	if schemaDuration.MatchString("10s") || !schemaDuration.MatchString("PT0.000042S") {
		t.Error("the Duration pattern does not tell ISO durations apart")
	}
}
