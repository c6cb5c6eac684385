package session

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// overlapModel is the rule OtherTests follows, kept as sets: every test
// open at some moment of a test's life is another test; a stream that
// joins its group (both open) is the group, not a test of its own.
type overlapModel struct {
	open map[int]bool
	with map[int]map[int]bool
}

func (m *overlapModel) start(id int) {
	m.with[id] = map[int]bool{}
	for k := range m.open {
		m.with[k][id], m.with[id][k] = true, true
	}
	m.open[id] = true
}

func (m *overlapModel) join(id, gid int) {
	delete(m.open, id)
	for k := range m.open {
		if m.with[k][id] {
			delete(m.with[k], id)
			if k != gid {
				m.with[k][gid], m.with[gid][k] = true, true
			}
		}
	}
}

func (m *overlapModel) finish(id int) int {
	delete(m.open, id)
	return len(m.with[id])
}

// TestCPUOtherTestsCounted checks the server's counted OtherTests against
// the rule kept as sets, over random starts, joins and ends.
func TestCPUOtherTestsCounted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		s := &Server{cfg: ServerConfig{MaxTests: 1024}}
		m := &overlapModel{open: map[int]bool{}, with: map[int]map[int]bool{}}
		next := 0
		var open []int // tests open, in s and in m
		for range 300 {
			switch op := rng.IntN(10); {
			case op < 5 || len(open) == 0:
				next++
				s.noteCPU(next)
				m.start(next)
				if len(open) > 0 && rng.IntN(3) == 0 {
					// A stream joining an open group.
					gid := open[rng.IntN(len(open))]
					s.cpuJoined(next, gid)
					m.join(next, gid)
					continue
				}
				open = append(open, next)
			default:
				i := rng.IntN(len(open))
				id := open[i]
				open = append(open[:i], open[i+1:]...)
				r := &result.Result{}
				s.fillTestCPU(id, r)
				want := m.finish(id)
				if r.CPU != nil && r.CPU.OtherTests != want {
					t.Fatalf("round %d, test %d: other_tests %d, want %d", round, id, r.CPU.OtherTests, want)
				}
			}
		}
	}
}

// TestCPUOverlapMemory: the CPU bookkeeping of 1000 open tests stays
// small (sets of the tests each overlapped took 35 MiB).
func TestCPUOverlapMemory(t *testing.T) {
	s := &Server{cfg: ServerConfig{MaxTests: 1024}}
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	for i := 1; i <= 1000; i++ {
		s.noteCPU(i)
	}
	runtime.GC()
	runtime.ReadMemStats(&b)
	runtime.KeepAlive(s)
	if grew := int64(b.HeapAlloc) - int64(a.HeapAlloc); grew > 4<<20 {
		t.Errorf("1000 open tests hold %d bytes of CPU bookkeeping, want under 4 MiB", grew)
	}
}
