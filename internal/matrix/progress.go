package matrix

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/eta"
	"github.com/wirebench/wirebench/internal/result"
)

// Progress words a matrix's progress (Config.OnCell and OnInterval): a
// line per cell, and on a live display (a terminal, redrawn in place)
// one per interval too. It is safe for concurrent use.
type Progress struct {
	mu   sync.Mutex
	show func(line string)
	live bool
	head string // the running cell's
	// The time left: the tests still to run, each asked to last its
	// each, at the cost per test measured so far (internal/eta).
	now  func() time.Time
	est  *eta.Estimator
	ran  int
	each []time.Duration
}

// NewProgress returns a Progress that shows its lines through show; live
// says they are redrawn in place.
func NewProgress(show func(line string), live bool) *Progress {
	return &Progress{show: show, live: live, now: time.Now}
}

// Start is told how long each test the matrix runs is asked to last, in
// order (Config.OnStart), and starts the estimate of the time left.
func (p *Progress) Start(each []time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.each, p.est = each, eta.New(p.now())
}

// Cell shows that cell n of total starts.
func (p *Progress) Cell(n, total int, c result.MatrixCell) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.head = fmt.Sprintf("matrix [%d/%d] %s", n, total, c.Name())
	line := p.head
	if c.Method != "" {
		line += " (" + c.Method + ")"
	}
	if c.Status == StatusUnsupported {
		line += ": unsupported"
	} else if p.est != nil {
		if p.ran > 0 && p.ran <= len(p.each) {
			// The test before this one ended: its cost is measured.
			p.est.Trial("test", p.now(), p.each[p.ran-1], false)
		}
		var w eta.Work
		for _, d := range p.each[min(p.ran, len(p.each)):] {
			w = append(w, eta.Trials("test", 1, d))
		}
		left := p.est.Left(w)
		p.ran++
		line += ", " + eta.Phrase(left)
	}
	p.show(line)
}

// Interval shows the running cell's interval on a live display (a log
// gets one line per cell, not one per second).
func (p *Progress) Interval(_ result.MatrixCell, in result.Interval) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		p.show(fmt.Sprintf("%s: %.0f s, %.2f Mbit/s", p.head, in.End, in.BitsPerSecond/1e6))
	}
}

// Summary is the one line history shows for a matrix: each cell's figure.
func Summary(m *result.Matrix) string {
	var b strings.Builder
	b.WriteString("matrix")
	for i, c := range m.Cells {
		sep := ", "
		if i == 0 {
			sep = " "
		}
		b.WriteString(sep + c.Name() + " ")
		if c.Status != StatusOK {
			b.WriteString(string(c.Status))
			continue
		}
		if c.BitsPerSecond != nil {
			b.WriteString(fmt.Sprintf("%.2f Mbit/s", *c.BitsPerSecond/1e6))
		}
	}
	return b.String()
}

// Failed is the error a matrix that ran ends with: its own error, or the
// first cell that failed; nil when every cell gave its figure or was
// unsupported.
func Failed(m *result.Matrix) error {
	if m.Error != "" {
		return fmt.Errorf("matrix: %s", m.Error)
	}
	for _, c := range m.Cells {
		if c.Status == StatusFailed {
			return fmt.Errorf("matrix: the %s cell failed: %s", c.Name(), c.Reason)
		}
	}
	return nil
}
