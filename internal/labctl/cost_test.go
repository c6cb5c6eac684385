package labctl

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/proccpu"
)

// TestStatusCostText: `lab status` says what each of the lab's processes
// has cost and, with more than one, what they cost together.
func TestStatusCostText(t *testing.T) {
	s := Status{Name: "t", State: StateUp, Config: &State{Name: "t", Filler: &Wire{PID: 4711}},
		Cost: []ProcCost{
			{Role: "filler", Usage: proccpu.Usage{PID: 4711, CPU: 900 * time.Millisecond, Age: 15 * time.Minute}, CoreShare: 0.001},
			{Role: "relay", Usage: proccpu.Usage{PID: 4712, CPU: 18 * time.Second, Age: 15 * time.Minute}, CoreShare: 0.02},
		}}
	var b strings.Builder
	s.WriteText(&b)
	for _, want := range []string{
		"filler pid 4711: 0.90 s of CPU in 15m0s (0.10 % of a core)\n",
		"relay  pid 4712: 18.00 s of CPU in 15m0s (2.00 % of a core)\n",
		"together: 2.10 % of a core\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lab status lacks %q:\n%s", want, b.String())
		}
	}
	s.Cost = s.Cost[:1]
	b.Reset()
	s.WriteText(&b)
	if strings.Contains(b.String(), "together") || !strings.Contains(b.String(), "filler pid 4711") {
		t.Errorf("one process: want its line and no sum:\n%s", b.String())
	}
}

// TestReadCostsOnlyInLab: a PID the state file names counts only while
// it runs inside one of the lab's namespaces (else it may be someone
// else's by now).
func TestReadCostsOnlyInLab(t *testing.T) {
	me := os.Getpid()
	st := &State{Filler: &Wire{PID: me}}
	if cs := readCosts(st, []netlab.NSInfo{{PIDs: []int{me + 1}}}, nil); len(cs) != 0 {
		t.Errorf("a PID outside the lab's namespaces was counted: %+v", cs)
	}
	cs := readCosts(st, []netlab.NSInfo{{PIDs: []int{me}}}, nil)
	if _, err := proccpu.Read(me); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if len(cs) != 1 || cs[0].Role != "filler" || cs[0].PID != me || cs[0].CoreShare != cs[0].Share() {
		t.Errorf("readCosts = %+v, want this process as the filler", cs)
	}
}
