package labctl

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/edtwire"
	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/netlab"
)

// sampleState is a state file with every part set: hosts a, r and b, a
// model with one relay, and an exact wire.
func sampleState() State {
	return State{
		Schema: "wirebench/1", Kind: "lab", Name: "t", Net: "198.18.0.0/24", Medium: "eth100",
		RateBPS: 100e6, Burst: 1538, MTU: 1500, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Hosts: map[string]Host{
			"a": {Namespace: "wbl-lab-t-a", Ifname: "wbl-a", Addr: "198.18.0.1"},
			"r": {Namespace: "wbl-lab-t-r", Ifname: "wbl-ra", Addr: "198.18.0.0"},
			"b": {Namespace: "wbl-lab-t-b", Ifname: "wbl-b", Addr: "198.18.0.2"},
		},
		Model: &Model{Spec: "loss=1%", Both: true, Relays: []Relay{{Listen: "198.18.0.0:5001", To: "198.18.0.2:5001",
			Seed: 7, PID: 42, Log: "/x/relay.log", Report: "/x/relay.json"}}},
		Wire: &Wire{PID: 43, Config: "/x/c.json", Stats: "/x/s.json", Log: "/x/w.log"},
	}
}

func TestStateFileRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lab-t.json")
	want := sampleState()
	if err := WriteStateFile(p, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadStateFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v\nwant %+v", got, want)
	}
	if _, err := os.Stat(p + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left: %v", err)
	}
	// The file's field names are what `lab status --json` shows under
	// "config"; a renamed field would break readers of either.
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"rate_bps": 100000000`, `"namespace": "wbl-lab-t-r"`, `"spec": "loss=1%"`, `"report": "/x/relay.json"`, `"stats": "/x/s.json"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("state file lacks %s:\n%s", k, b)
		}
	}
}

func TestReadStateFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadStateFile(filepath.Join(dir, "none.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
	p := filepath.Join(dir, "lab-g.json")
	if err := os.WriteFile(p, []byte("{garbled"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadStateFile(p); err == nil || errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), p) {
		t.Errorf("garbled file: %v, want an error naming %s", err, p)
	}
}

func TestComplete(t *testing.T) {
	st := sampleState()
	all := []string{"wbl-lab-t-a", "wbl-lab-t-b", "wbl-lab-t-r"}
	if !Complete(st, all) {
		t.Error("all namespaces exist, lab not complete")
	}
	if Complete(st, all[:2]) {
		t.Error("r is missing, lab complete")
	}
	if Complete(State{}, all) {
		t.Error("a state with no hosts is complete")
	}
}

func TestNameFlagAndPaths(t *testing.T) {
	if got := NameFlag(DefaultName); got != "" {
		t.Errorf("NameFlag(default) = %q", got)
	}
	if got := NameFlag("x1"); got != " --name x1" {
		t.Errorf("NameFlag(x1) = %q", got)
	}
	if got := StatePath("x1"); got != filepath.Join(StateDir, "lab-x1.json") {
		t.Errorf("StatePath = %q", got)
	}
	// RemoveFiles finds a lab's files by these prefixes.
	lg, rep := relayFiles("x1", 5001)
	c, s, wl := wireFiles("x1")
	for _, p := range []string{lg, rep} {
		if !strings.HasPrefix(filepath.Base(p), "lab-x1-relay-5001.") {
			t.Errorf("relay file %s", p)
		}
	}
	for _, p := range []string{c, s, wl} {
		if !strings.HasPrefix(filepath.Base(p), "lab-x1-wire") {
			t.Errorf("wire file %s", p)
		}
	}
}

// TestRelayReadyLine: the line `wirebench relay` logs once bound is
// recognised and its seed captured.
func TestRelayReadyLine(t *testing.T) {
	log := "wirebench: something first\nwirebench: relaying 198.18.0.0:5001 -> 198.18.0.2:5001 (model \"loss=1%\", seed 1234567890123)\n"
	m := relayReadyRE.FindStringSubmatch(log)
	if m == nil || m[1] != "1234567890123" {
		t.Fatalf("match %q", m)
	}
	if relayReadyRE.MatchString("wirebench: relaying soon\n") {
		t.Error("a line with no seed matched")
	}
}

func TestLastLine(t *testing.T) {
	for in, want := range map[string]string{"": "no output", " \n\n": "no output", "one": "one", "a\nb\n\n": "b"} {
		if got := lastLine([]byte(in)); got != want {
			t.Errorf("lastLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRelayStatuses: a relay whose PID is in r runs; one whose PID is not
// shows its log's last line.
func TestRelayStatuses(t *testing.T) {
	dir := t.TempDir()
	st := sampleState()
	dead := Relay{Listen: "198.18.0.0:5201", PID: 99, Log: filepath.Join(dir, "dead.log")}
	if err := os.WriteFile(dead.Log, []byte("started\nwirebench: bind: address in use\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st.Model.Relays = append(st.Model.Relays, dead)
	nss := []netlab.NSInfo{{Name: "wbl-lab-t-a", PIDs: []int{99}}, {Name: "wbl-lab-t-r", PIDs: []int{42}}}
	got := relayStatuses(&st, nss)
	if len(got) != 2 || !got[0].Running || got[0].LastLog != "" || got[1].Running || got[1].LastLog != "wirebench: bind: address in use" {
		t.Errorf("statuses %+v", got)
	}
	if relayStatuses(&State{}, nss) != nil || relayStatuses(nil, nss) != nil {
		t.Error("statuses of a lab with no model")
	}
}

// TestCollectRelayReports: a relay's report is read; one that left none
// gets a warning with its log's last line.
func TestCollectRelayReports(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rep, err := json.Marshal(lab.Report{Schema: "wirebench/1", Kind: "relay", Listen: "198.18.0.0:5001", Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	st := &State{Model: &Model{Relays: []Relay{
		{Listen: "198.18.0.0:5001", Log: write("1.log", ""), Report: write("1.json", string(rep))},
		{Listen: "198.18.0.0:5201", Log: write("2.log", "wirebench: killed\n"), Report: write("2.json", "")},
	}}}
	reps, warns := collectRelayReports("t", st)
	if len(reps) != 1 || reps[0].Listen != "198.18.0.0:5001" || reps[0].Seed != 7 {
		t.Errorf("reports %+v", reps)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "the relay on 198.18.0.0:5201 left no closing report") ||
		!strings.HasSuffix(warns[0], "its log ends: wirebench: killed") {
		t.Errorf("warnings %q", warns)
	}
}

func TestWireStatsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "stats.json")
	st := &State{Wire: &Wire{Stats: p}}
	if got := readWireStats(st); got != nil {
		t.Errorf("no counters yet, read %v", got)
	}
	want := []edtwire.Stats{{Name: "a>b", Frames: 3, Bytes: 294}, {Name: "b>a", Frames: 3}}
	if err := writeCounters(p, want); err != nil {
		t.Fatal(err)
	}
	if got := readWireStats(st); !reflect.DeepEqual(got, want) {
		t.Errorf("read %+v, want %+v", got, want)
	}
	if readWireStats(&State{}) != nil || readWireStats(nil) != nil {
		t.Error("counters of a lab with no exact wire")
	}
}

func TestRunWireBadConfig(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	if err := RunWire(t.Context(), filepath.Join(dir, "none.json"), filepath.Join(dir, "s.json"), &log); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing configuration: %v", err)
	}
	p := filepath.Join(dir, "c.json")
	if err := os.WriteFile(p, []byte("[1,"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RunWire(t.Context(), p, filepath.Join(dir, "s.json"), &log); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("garbled configuration: %v", err)
	}
	if log.Len() != 0 {
		t.Errorf("a wire that never ran logged %q", log.String())
	}
}
