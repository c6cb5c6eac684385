//go:build linux

package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	var d labDown
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
	if left, _ := filepath.Glob(filepath.Join(labStateDir, "lab-"+name+"-relay-*")); len(left) != 0 {
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
	if err := os.Remove(labStatePath(name)); err != nil {
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
