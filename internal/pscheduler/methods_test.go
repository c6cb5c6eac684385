package pscheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// invoke runs a method as the plugin's executables do and returns its
// output.
func invoke(t *testing.T, method, input string, cfg Config) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := Invoke(context.Background(), method, strings.NewReader(input), &out, cfg); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return out.Bytes()
}

func TestEnumerate(t *testing.T) {
	// pScheduler's PluginEnumeration/Tool schema: these keys and no other.
	var e struct {
		Schema      *int     `json:"schema"`
		Name        *string  `json:"name"`
		Description *string  `json:"description"`
		Version     *string  `json:"version"`
		Tests       []string `json:"tests"`
		Preference  *int     `json:"preference"`
		Maintainer  *struct {
			Name  *string `json:"name"`
			Email *string `json:"email"`
			Href  *string `json:"href"`
		} `json:"maintainer"`
		SchedulingClass *string `json:"scheduling-class"`
	}
	strictDecode(t, invoke(t, "enumerate", "", Config{}), &e)
	if e.Name == nil || *e.Name != "wirebench" || e.Description == nil || e.Version == nil || e.Preference == nil ||
		e.Maintainer == nil || e.Maintainer.Name == nil {
		t.Fatalf("a required key is missing: %+v", e)
	}
	if !regexp.MustCompile(`^[0-9]+(\.[0-9]+)*[A-Za-z0-9-+]*$`).MatchString(*e.Version) {
		t.Errorf("version %q does not match pScheduler's Version pattern", *e.Version)
	}
	if !slices.Equal(e.Tests, []string{"throughput", "rtt"}) {
		t.Errorf("tests = %v", e.Tests)
	}
	if *e.Preference >= 0 {
		t.Errorf("preference %d would put wirebench ahead of ping (0) for rtt tests", *e.Preference)
	}
}

// canRun runs can-run on a test object.
func canRun(t *testing.T, test string, cfg Config) CanRunResult {
	t.Helper()
	var r struct {
		CanRun  *bool    `json:"can-run"`
		Reasons []string `json:"reasons"`
	}
	strictDecode(t, invoke(t, "can-run", test, cfg), &r)
	if r.CanRun == nil {
		t.Fatalf("can-run missing from the answer to %s", test)
	}
	if *r.CanRun && len(r.Reasons) > 0 || !*r.CanRun && len(r.Reasons) == 0 {
		t.Fatalf("can-run %v with reasons %q", *r.CanRun, r.Reasons)
	}
	return CanRunResult{CanRun: *r.CanRun, Reasons: r.Reasons}
}

func TestCanRun(t *testing.T) {
	devices := Config{Devices: []Device{{Dest: "198.18.0.0/15", Dialect: "raw", Port: 5001}}}
	yes := []string{
		`{"type":"throughput","spec":{"schema":7,"dest":"192.0.2.1","udp":true,"bandwidth":1000000,"duration":"PT5S","parallel":2,"interval":"PT1S","buffer-length":1200,"ip-version":4,"reverse":true}}`,
		`{"type":"throughput","spec":{"schema":2,"dest":"198.18.0.7","single-ended":true,"udp":true}}`,
		`{"type":"rtt","spec":{"schema":1,"dest":"127.0.0.1","count":3,"length":100,"interval":"PT0.2S","ttl":32}}`,
	}
	for _, in := range yes {
		if r := canRun(t, in, devices); !r.CanRun {
			t.Errorf("cannot run %s: %q", in, r.Reasons)
		}
	}
	no := map[string]string{
		`{"type":"latency","spec":{"dest":"x"}}`: "Unsupported test type",
		`{"spec":{"dest":"x"}}`:                  "Missing test type",
		`{"type":"rtt"}`:                         "Missing test specification",
		`{"type":"throughput","spec":{"schema":8,"dest":"192.0.2.1"}}`:                          "Schema 8",
		`{"type":"throughput","spec":{"dest":"192.0.2.1","fq-rate":1000}}`:                      "fq-rate",
		`{"type":"throughput","spec":{"dest":"192.0.2.1","bandwidth":1000}}`:                    "bandwidth needs udp",
		`{"type":"throughput","spec":{"dest":"192.0.2.1","duration":"10 seconds"}}`:             "duration",
		`{"type":"throughput","spec":{"dest":"198.18.0.7","single-ended":true,"reverse":true}}`: "reverse needs the iperf2",
		`{"type":"rtt","spec":{"dest":"127.0.0.1","protocol":"twamp"}}`:                         "Only icmp",
		`{"type":"rtt","spec":{"dest":"127.0.0.1","flow-label":3}}`:                             "flow-label",
		`{"type":"throughput","spec":{"dest":"192.0.2.1","duration":"P2D"}}`:                    "longer than wirebench runs",
		`{"type":"rtt","spec":{"dest":"127.0.0.1","count":100000000}}`:                          "longer than a day",
		`{"type":"rtt","spec":{"dest":"127.0.0.1","ttl":300}}`:                                  "ttl 300",
	}
	for in, want := range no {
		r := canRun(t, in, devices)
		if r.CanRun || !strings.Contains(strings.Join(r.Reasons, "; "), want) {
			t.Errorf("can-run %s = %v %q; want false with a reason naming %q", in, r.CanRun, r.Reasons, want)
		}
	}
	// Every unsupported option is named, not just the first.
	r := canRun(t, `{"type":"throughput","spec":{"dest":"192.0.2.1","fq-rate":1,"flow-label":2,"burst-size":3}}`, Config{})
	if len(r.Reasons) != 3 {
		t.Errorf("reasons %q, want one for each of fq-rate, flow-label, burst-size", r.Reasons)
	}
}

func TestDuration(t *testing.T) {
	cases := map[string]string{
		// wait 1 s + setup 4 s (link-rtt 200 ms) + 10 s + report 2 s
		`{"type":"throughput","spec":{"dest":"192.0.2.1"}}`: "PT17S",
		// + omit 2 s, setup 1 s for a 10 ms path
		`{"type":"throughput","spec":{"dest":"192.0.2.1","duration":"PT30S","omit":"PT2S","link-rtt":"PT0.01S"}}`: "PT36S",
		// 4 gaps of 1 s + 2 s for the last reply + 2 s
		`{"type":"rtt","spec":{"dest":"127.0.0.1"}}`: "PT8S",
		// a deadline replaces the rest
		`{"type":"rtt","spec":{"dest":"127.0.0.1","count":100,"deadline":"PT5S"}}`: "PT7S",
	}
	for in, want := range cases {
		var d struct {
			Duration *string `json:"duration"`
		}
		strictDecode(t, invoke(t, "duration", in, Config{}), &d)
		if d.Duration == nil || *d.Duration != want {
			t.Errorf("duration of %s = %v, want %s", in, d.Duration, want)
		}
	}
	var out bytes.Buffer
	if err := Invoke(context.Background(), "duration", strings.NewReader(`{"type":"rtt","spec":{"dest":"x","interval":"1s"}}`), &out, Config{}); err == nil {
		t.Error("a bad interval gave a duration")
	}
}

func TestParticipantData(t *testing.T) {
	var p0, p1 map[string]any
	json.Unmarshal(invoke(t, "participant-data", `{"participant":0,"test":{"type":"throughput","spec":{"dest":"x"}}}`, Config{}), &p0)
	json.Unmarshal(invoke(t, "participant-data", `{"participant":1,"test":{"type":"throughput","spec":{"dest":"x"}}}`, Config{ServerPort: 5333}), &p1)
	if _, ok := p0["server-port"]; ok {
		t.Errorf("participant 0 gave a server port: %v", p0)
	}
	if p1["server-port"] != float64(5333) {
		t.Errorf("participant 1 data %v, want server-port 5333", p1)
	}
	var out bytes.Buffer
	for _, in := range []string{`{"participant":2,"test":{"type":"throughput","spec":{}}}`, `{"participant":1,"test":{"type":"rtt","spec":{}}}`} {
		if err := Invoke(context.Background(), "participant-data", strings.NewReader(in), &out, Config{}); err == nil {
			t.Errorf("participant-data accepted %s", in)
		}
	}
}
