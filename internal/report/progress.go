package report

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// Progress shows where a long run is on w (stderr): one line redrawn in
// place on a terminal, a plain line per step otherwise. It is safe for
// concurrent use.
type Progress struct {
	mu   sync.Mutex
	w    io.Writer
	live bool // w is a terminal
	open bool // a live line is shown
}

// NewProgress returns a Progress writing to w.
func NewProgress(w io.Writer) *Progress {
	p := &Progress{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.live = true
		}
	}
	return p
}

// Live says whether w is a terminal, where a line is redrawn in place.
func (p *Progress) Live() bool { return p.live }

// Line shows one progress line.
func (p *Progress) Line(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.open = true
		return
	}
	fmt.Fprintln(p.w, line)
}

// Done clears the live line.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open {
		fmt.Fprint(p.w, "\r\033[K")
		p.open = false
	}
}
