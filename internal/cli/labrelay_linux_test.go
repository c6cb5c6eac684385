//go:build linux

package cli

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/labctl"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
)

// TestLabModelLossExact: `lab up --model loss=1%,seed=7` puts a relay in r;
// a wirebench client in a sends through r's address to a wirebench server
// in b, and the loss the client reports equals the relay's data.dropped
// exactly (from `lab down --json`, which ends the relay and reads its
// closing report); a cannot reach b past the relay; `lab down` leaves no
// namespace, process, state or relay file. The lab is unshaped: a shaped
// wire after the relay can drop a burst the relay releases after a stall,
// which is the wire's loss, not the model's (docs/lab-hosts.md).
func TestLabModelLossExact(t *testing.T) {
	const name = "t_model"
	needLab(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	out, _ := runLab(t, "lab", "up", "--name", name, "--net", "198.19.5.0/24", "--model", "loss=1%,seed=7", "--model-port", "5001")
	t.Logf("lab up:\n%s", out)
	for _, want := range []string{
		"r  198.19.5.0 ", `model "loss=1%,seed=7", a -> b`,
		"198.19.5.0:5001 -> 198.19.5.2:5001  seed 7",
		"send to 198.19.5.0, not 198.19.5.2",
		"wirebench lab exec --name " + name + " a -- wirebench client 198.19.5.0 -u -b 100M",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lab up output lacks %q", want)
		}
	}
	s := labStatusJSON(t, name)
	if s.State != "up" || len(s.Namespaces) != 3 || len(s.Relays) != 1 || !s.Relays[0].Running {
		t.Fatalf("status: %+v", s)
	}
	relayPID := s.Relays[0].PID
	var inodes [][2]uint64
	for _, ns := range s.Namespaces {
		inodes = append(inodes, nsInode(t, ns.Name))
	}

	startInLab(ctx, t, name, "b", []string{"server"}, "listening")
	s = labStatusJSON(t, name)
	pids := []int{relayPID}
	for _, ns := range s.Namespaces {
		pids = append(pids, ns.PIDs...)
	}
	// Past the relay there is no path: the client fails instead of
	// measuring an unimpaired wire.
	if code := run(ctx, append([]string{"lab", "exec", "--name", name, "a", "--"},
		wirebenchArgv("client", "198.19.5.2", "-u", "-b", "1M", "-t", "1")...), &strings.Builder{}, &strings.Builder{}); code == 0 {
		t.Errorf("a client in a reached b at 198.19.5.2, past the relay")
	}

	out, _ = runLab(t, append([]string{"lab", "exec", "--name", name, "a", "--"},
		wirebenchArgv("client", "198.19.5.0", "-u", "-b", "5000pps", "-t", "3", "--json")...)...)
	var r result.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("client JSON: %v\n%s", err, out)
	}
	if r.Receiver == nil || r.Receiver.Packets < 1000 {
		t.Fatalf("the measurement did not cross the relay: receiver %+v", r.Receiver)
	}

	out, _ = runLab(t, "lab", "down", "--name", name, "--json")
	var d labctl.Removal
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("lab down --json: %v\n%s", err, out)
	}
	if len(d.Relays) != 1 || len(d.Warnings) != 0 || len(d.Removed) != 3 {
		t.Fatalf("lab down: %s", out)
	}
	rep := d.Relays[0]
	t.Logf("client: %d received, %d lost; relay: data in %d, dropped %d; warnings %v",
		r.Receiver.Packets, r.Receiver.Lost, rep.Data.In, rep.Data.Dropped, rep.Warnings)
	if rep.Seed != 7 || rep.Listen != "198.19.5.0:5001" || rep.To != "198.19.5.2:5001" {
		t.Errorf("relay report: seed %d, %s -> %s", rep.Seed, rep.Listen, rep.To)
	}
	if rep.Data.Dropped == 0 || rep.Datagrams.DroppedBy["loss"] != rep.Datagrams.Dropped {
		t.Errorf("the model dropped nothing, or not by loss: %+v", rep.Datagrams)
	}
	if r.Receiver.Lost != rep.Data.Dropped {
		t.Errorf("client lost %d, relay data.dropped %d: want equal (relay warnings: %v)", r.Receiver.Lost, rep.Data.Dropped, rep.Warnings)
	}
	assertLabGone(t, name, inodes, pids)
	if left, _ := filepath.Glob(filepath.Join(labctl.StateDir, "lab-"+name+"-relay-*")); len(left) != 0 {
		t.Errorf("relay files left: %v", left)
	}
}

// TestLabModelStaleRelay: a relay left running by a lab whose state file is
// gone (a crash) is ended by the next `lab up`, which starts its own; the
// text of `lab down` then shows the new relay's closing report.
func TestLabModelStaleRelay(t *testing.T) {
	const name = "t_mstale"
	needLab(t, name)
	runLab(t, "lab", "up", "--name", name, "--net", "198.19.6.0/24", "--model", "dup=1%", "--model-port", "5001")
	old := labStatusJSON(t, name).Relays
	if len(old) != 1 || !old[0].Running {
		t.Fatalf("relays: %+v", old)
	}
	if err := os.Remove(labctl.StatePath(name)); err != nil {
		t.Fatal(err)
	}
	if s := labStatusJSON(t, name); s.State != "partial" {
		t.Fatalf("status without a state file: %+v", s)
	}
	_, errOut := runLab(t, "lab", "up", "--name", name, "--net", "198.19.6.0/24", "--model", "dup=1%", "--model-port", "5001")
	if !strings.Contains(errOut, "removed leftovers") || !strings.Contains(errOut, "ended processes") {
		t.Errorf("lab up did not say what it removed: %q", errOut)
	}
	pids, err := netlab.NamespacePIDs(netlab.LabNamespace(name, "r"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pids) != 1 || pids[0] == old[0].PID {
		t.Errorf("processes in r: %v, want only a new relay (the old one was %d)", pids, old[0].PID)
	}
	out, _ := runLab(t, "lab", "down", "--name", name)
	if !strings.Contains(out, `relay 198.19.6.0:5001 -> 198.19.6.2:5001, model "dup=1%"`) || strings.Contains(out, "warning") {
		t.Errorf("lab down output:\n%s", out)
	}
}

// TestLabModelServiceCliff is a modem's size cliff in the lab: with
// `--model service=5000,buffer=2524` a client in a offering 15000
// datagrams/s gets about 10000/s of 1262 bytes through the relay (two per
// buffer) but about 5000/s of 1263 (ratio 0.45–0.55). The model is judged
// by what the relay forwarded: that follows from the datagrams' arrival
// times alone, while the server's own rate also carries how late a loaded
// host ran the relay's sends (which squeezes the receive window: 5826/s was
// read once for 5000/s forwarded). The server must get what the relay
// forwarded. An attempt whose sender stalled for over 150 ms (the relay's
// max_arrival_gap_ms; the model's queue is 200 ms) describes the host, not
// the model, and is repeated, at most three times.
func TestLabModelServiceCliff(t *testing.T) {
	const name = "t_mcliff"
	needLab(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	forwarded := map[int]int64{}
	for _, size := range []int{1262, 1263} {
		for attempt := 1; ; attempt++ {
			if attempt > 3 {
				t.Fatalf("%d B: the sender stalled in all three attempts: the host is too loaded to offer a steady load", size)
			}
			runLab(t, "lab", "up", "--name", name, "--net", "198.19.7.0/24", "--model", "service=5000,buffer=2524", "--model-port", "5001")
			startInLab(ctx, t, name, "b", []string{"server"}, "listening")
			out, _ := runLab(t, append([]string{"lab", "exec", "--name", name, "a", "--"},
				wirebenchArgv("client", "198.19.7.0", "-u", "-b", "15000pps", "-l", strconv.Itoa(size), "-t", "3", "--json")...)...)
			var r result.Result
			if err := json.Unmarshal([]byte(out), &r); err != nil || r.Receiver == nil {
				t.Fatalf("client JSON: %v\n%s", err, out)
			}
			out, _ = runLab(t, "lab", "down", "--name", name, "--json")
			var d labctl.Removal
			if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Relays) != 1 {
				t.Fatalf("lab down --json: %v\n%s", err, out)
			}
			rep := d.Relays[0]
			t.Logf("%d B, attempt %d: server %.0f/s; relay %+v, warnings %q", size, attempt, r.Receiver.PacketsPerSecond, rep.Datagrams, rep.Warnings)
			if rep.Datagrams.MaxGapMS > 150 {
				continue
			}
			if rep.Datagrams.DroppedBy["service_queue"] == 0 {
				t.Errorf("%d B: the service queue dropped nothing at 15000/s offered", size)
			}
			fw := rep.Datagrams.Data.Forwarded
			if got := r.Receiver.Packets; float64(got) < 0.98*float64(fw) {
				t.Errorf("%d B: the server received %d of the %d data datagrams the relay forwarded", size, got, fw)
			}
			forwarded[size] = fw
			break
		}
	}
	// 3 s of arrivals plus the 200 ms queue draining after them.
	const window = 3.2
	hi, lo := float64(forwarded[1262])/window, float64(forwarded[1263])/window
	if r := lo / hi; r < 0.45 || r > 0.55 || math.Abs(hi-10000) > 1000 {
		t.Errorf("forwarded 1262 B: %.0f/s, 1263 B: %.0f/s, ratio %.3f; want about 10000 and 5000, ratio 0.45–0.55", hi, lo, r)
	}
}

// TestLabModelWireDrops: with a shaped wire after the relay, packets the
// wire's queue drops are not the model's: offered 500 datagrams/s of 1470
// bytes on a 1 Mbit/s wire (about 85/s fit) with an empty model, the client
// loses hundreds, the relay drops none, and `lab down` warns that the
// wire dropped them.
func TestLabModelWireDrops(t *testing.T) {
	const name = "t_mwire"
	needLab(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runLab(t, "lab", "up", "--name", name, "--net", "198.19.8.0/24", "--rate", "1mbit", "--model", "", "--model-port", "5001")
	startInLab(ctx, t, name, "b", []string{"server"}, "listening")
	out, _ := runLab(t, append([]string{"lab", "exec", "--name", name, "a", "--"},
		wirebenchArgv("client", "198.19.8.0", "-u", "-b", "500pps", "-t", "1", "--json")...)...)
	var r result.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Receiver == nil {
		t.Fatalf("client JSON: %v\n%s", err, out)
	}
	s := labStatusJSON(t, name)
	out, _ = runLab(t, "lab", "down", "--name", name, "--json")
	var d labctl.Removal
	if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Relays) != 1 {
		t.Fatalf("lab down --json: %v\n%s", err, out)
	}
	t.Logf("client lost %d; relay dropped %d; r's links %+v; warnings %q", r.Receiver.Lost, d.Relays[0].Data.Dropped, s.Namespaces[2].Links, d.Warnings)
	if r.Receiver.Lost < 100 || d.Relays[0].Datagrams.Dropped != 0 {
		t.Errorf("client lost %d, relay dropped %d: want hundreds and none", r.Receiver.Lost, d.Relays[0].Datagrams.Dropped)
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "the shaped wire in r (htb on wbl-rb) dropped") {
		t.Errorf("warnings %q: want one saying the wire towards b dropped packets", d.Warnings)
	}
}
