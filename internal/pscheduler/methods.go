package pscheduler

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/version"
)

// Highest spec schemas this tool knows (the test types' MAX_SCHEMA).
const (
	maxThroughputSchema = 7
	maxRTTSchema        = 4
)

// Enumeration is what the enumerate method returns.
type Enumeration struct {
	Schema      int        `json:"schema"`
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Version     string     `json:"version"`
	Tests       []string   `json:"tests"`
	Preference  int        `json:"preference"`
	Maintainer  Maintainer `json:"maintainer"`
}

// Maintainer names who looks after the tool.
type Maintainer struct {
	Name string `json:"name"`
	Href string `json:"href,omitempty"`
}

// Enumerate describes the tool. Its preference is below iperf3's (10) and
// ping's (0), so pScheduler picks wirebench only when a task names it
// (--tool wirebench) or no other tool can run the test.
func Enumerate() Enumeration {
	return Enumeration{
		Schema:      1,
		Name:        "wirebench",
		Description: "Measure throughput (iperf2, iperf3, zperf, lwiperf and ESP-IDF dialects) and round-trip time with wirebench " + version.String(),
		Version:     "1.0",
		Tests:       []string{TestThroughput, TestRTT},
		Preference:  -10,
		Maintainer:  Maintainer{Name: "wirebench developers", Href: "https://github.com/wirebench/wirebench"},
	}
}

// CanRunResult is what the can-run method returns.
type CanRunResult struct {
	CanRun  bool     `json:"can-run"`
	Reasons []string `json:"reasons,omitempty"`
}

func cannot(reasons ...string) CanRunResult { return CanRunResult{CanRun: false, Reasons: reasons} }

// Options of each test's spec that wirebench carries out; any other is a
// reason it cannot run the test.
var (
	throughputOptions = words("schema source source-node dest dest-node duration interval link-rtt parallel udp bandwidth window-size mss buffer-length ip-tos ip-version local-address omit no-delay congestion zero-copy single-ended single-ended-port reverse loopback")
	rttOptions        = words("schema count dest interval ip-version source source-node length timeout deadline fragment hostnames protocol ttl")
)

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// CanRun says whether wirebench can run test, and if not, why.
func CanRun(test Test, cfg Config) CanRunResult {
	switch test.Type {
	case "":
		return cannot("Missing test type")
	case TestThroughput, TestRTT:
	default:
		return cannot("Unsupported test type")
	}
	if len(test.Spec) == 0 {
		return cannot("Missing test specification")
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(test.Spec, &keys); err != nil {
		return cannot("Invalid test specification: " + err.Error())
	}
	known, max := throughputOptions, maxThroughputSchema
	if test.Type == TestRTT {
		known, max = rttOptions, maxRTTSchema
	}
	var reasons []string
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !known[k] {
			reasons = append(reasons, fmt.Sprintf("wirebench does not support the %s option", k))
		}
	}
	var schema struct {
		Schema int `json:"schema"`
	}
	if err := json.Unmarshal(test.Spec, &schema); err == nil && schema.Schema > max {
		reasons = append(reasons, fmt.Sprintf("Schema %d is not supported (highest is %d)", schema.Schema, max))
	}
	if test.Type == TestThroughput {
		reasons = append(reasons, throughputReasons(test.Spec, cfg)...)
	} else {
		reasons = append(reasons, rttReasons(test.Spec)...)
	}
	if len(reasons) > 0 {
		return cannot(reasons...)
	}
	return CanRunResult{CanRun: true}
}

// throughputReasons checks what the options ask for against what
// wirebench and the destination's dialect can do.
func throughputReasons(raw json.RawMessage, cfg Config) []string {
	var s ThroughputSpec
	if err := json.Unmarshal(raw, &s); err != nil {
		return []string{"Invalid test specification: " + err.Error()}
	}
	var r []string
	if s.Dest == "" {
		r = append(r, "Missing dest")
	}
	if s.Bandwidth > 0 && !s.UDP {
		r = append(r, "wirebench paces UDP only: bandwidth needs udp")
	}
	if s.SingleEnded && s.Loopback {
		r = append(r, "single-ended and loopback cannot both be set")
	}
	if s.Interval != "" {
		if _, err := ParseDuration(s.Interval); err != nil {
			r = append(r, fmt.Sprintf("interval: %v", err))
		}
	}
	if _, _, err := throughputTimes(s); err != nil {
		r = append(r, err.Error())
	}
	if _, dialect := cfg.dialectFor(s.Dest); s.SingleEnded && s.Reverse && dialect != session.DialectIperf2 {
		// Said here in the spec's words; the client's own check would
		// name its command-line flags.
		return append(r, fmt.Sprintf("reverse needs the iperf2 (2.1) dialect; %s is configured as %s", s.Dest, dialect))
	}
	if _, err := clientConfig(s, cfg, ""); err != nil && s.Dest != "" && len(r) == 0 {
		r = append(r, err.Error())
	}
	return r
}

// rttReasons checks an rtt spec.
func rttReasons(raw json.RawMessage) []string {
	var s RTTSpec
	if err := json.Unmarshal(raw, &s); err != nil {
		return []string{"Invalid test specification: " + err.Error()}
	}
	var r []string
	if s.Dest == "" {
		r = append(r, "Missing dest")
	}
	if s.Protocol != "" && s.Protocol != "icmp" {
		r = append(r, "Only icmp protocol is supported")
	}
	if s.TTL > 255 {
		r = append(r, fmt.Sprintf("ttl %d out of range 1-255", s.TTL))
	}
	if s.TTL > 0 && runtime.GOOS != "linux" {
		r = append(r, "wirebench sets the ping TTL on Linux only")
	}
	if _, err := planRTT(s); err != nil {
		r = append(r, err.Error())
	}
	return r
}

// DurationResult is what the duration method returns.
type DurationResult struct {
	Duration string `json:"duration"`
}

// Duration says how long a run of test takes, setup and wind-down
// included, in whole seconds.
func Duration(test Test, cfg Config) (DurationResult, error) {
	switch test.Type {
	case TestThroughput:
		var s ThroughputSpec
		if err := json.Unmarshal(test.Spec, &s); err != nil {
			return DurationResult{}, fmt.Errorf("reading throughput spec: %w", err)
		}
		d, err := throughputDuration(s, cfg)
		return DurationResult{FormatWholeSeconds(d)}, err
	case TestRTT:
		var s RTTSpec
		if err := json.Unmarshal(test.Spec, &s); err != nil {
			return DurationResult{}, fmt.Errorf("reading rtt spec: %w", err)
		}
		d, err := rttDuration(s)
		return DurationResult{FormatWholeSeconds(d)}, err
	}
	return DurationResult{}, fmt.Errorf("unsupported test type %q", test.Type)
}

// ParticipantData returns what participant in.Participant tells the
// others: for throughput, participant 1 (the host that runs the server)
// gives its server port.
func ParticipantData(in ParticipantInput, cfg Config) (map[string]any, error) {
	switch in.Test.Type {
	case TestRTT:
		if in.Participant != 0 {
			return nil, fmt.Errorf("invalid participant %d for an rtt test (it has one)", in.Participant)
		}
		return map[string]any{}, nil
	case TestThroughput, "":
	default:
		return nil, fmt.Errorf("unsupported test type %q", in.Test.Type)
	}
	switch in.Participant {
	case 0:
		return map[string]any{"schema": 1}, nil
	case 1:
		return map[string]any{"schema": 1, "server-port": cfg.serverPort()}, nil
	}
	return nil, fmt.Errorf("invalid participant %d for a throughput test (0 or 1)", in.Participant)
}

// errNoResults is a merge with nothing to merge.
var errNoResults = errors.New("merged-results: no participant results given")
