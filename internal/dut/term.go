package dut

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// screen is a small terminal model of one shell session: it turns the
// device's raw output into the lines a human would read on a terminal.
// Zephyr's shell colours its output with SGR sequences and, when output
// arrives while the prompt is shown, erases the prompt (ESC[nD, ESC[J),
// prints the output and draws the prompt again, so one report line can
// reach us split by several prompt redraws:
//
//	^[[1;32muart:~$ ^[[m^[[8D^[[J rate:\t\t\t^[[1;32muart:~$ ^[[m^[[8D^[[J11.58 Mbps^M
//
// which a terminal shows as " rate:\t\t\t11.58 Mbps". The model keeps one
// line of cells and a cursor: printable characters overwrite or extend the
// line at the cursor, CR moves to column 0, backspace and ESC[nD move left,
// ESC[nC right, ESC[nG to a column, ESC[J and ESC[K erase from the cursor
// to the end, LF ends the line. SGR and every other sequence are dropped. A
// tab is kept as one cell: the shell counts its cursor moves from what it
// printed itself, so erasing a prompt printed after a tab still erases
// exactly the prompt.
//
// Escape sequences split across reads are completed by the next read. The
// raw bytes of each line are kept beside its text for the transcript.
type screen struct {
	cells   []rune
	cur     int
	raw     []byte // the raw bytes of the current line
	pending []byte // an incomplete escape sequence or UTF-8 rune
}

// maxEscape bounds a pending escape sequence: anything longer is not one
// the model knows and is dropped.
const maxEscape = 32

// write feeds raw device output; emit is called with each completed line:
// its text as shown and its raw bytes.
func (s *screen) write(p []byte, emit func(text string, raw []byte)) {
	b := append(s.pending, p...)
	s.pending = nil
	for len(b) > 0 {
		n, ok := s.step(b, emit)
		if !ok {
			s.pending = append([]byte(nil), b...)
			return
		}
		b = b[n:]
	}
}

// step consumes one character or sequence from b and returns how many bytes
// it took; ok is false when b ends inside an escape sequence or a rune.
func (s *screen) step(b []byte, emit func(string, []byte)) (n int, ok bool) {
	c := b[0]
	switch {
	case c == 0x1b:
		n, ok = s.escape(b)
		if ok {
			s.raw = append(s.raw, b[:n]...)
		}
		return n, ok
	case c == '\n':
		line, raw := string(s.cells), s.raw
		s.cells, s.cur, s.raw = s.cells[:0:0], 0, nil
		emit(line, raw)
		return 1, true
	case c == '\r':
		s.cur = 0
	case c == '\b':
		s.cur = max(0, s.cur-1)
	case c == '\t':
		s.put('\t')
	case c < 0x20 || c == 0x7f:
		// other control bytes (BEL, NUL, DEL …) show nothing
	case c < utf8.RuneSelf:
		s.put(rune(c))
	default:
		if !utf8.FullRune(b) {
			return 0, false
		}
		r, size := utf8.DecodeRune(b) // invalid bytes decode as U+FFFD, one byte each
		s.put(r)
		s.raw = append(s.raw, b[:size]...)
		s.capLine(emit)
		return size, true
	}
	s.raw = append(s.raw, c)
	s.capLine(emit)
	return 1, true
}

// capLine ends a line that grew past maxLine (a device that never ends a
// line cannot grow memory without bound).
func (s *screen) capLine(emit func(string, []byte)) {
	if len(s.cells) >= maxLine {
		line, raw := string(s.cells), s.raw
		s.cells, s.cur, s.raw = s.cells[:0:0], 0, nil
		emit(line, raw)
	}
}

func (s *screen) put(r rune) {
	for len(s.cells) < s.cur {
		s.cells = append(s.cells, ' ')
	}
	if s.cur < len(s.cells) {
		s.cells[s.cur] = r
	} else {
		s.cells = append(s.cells, r)
	}
	s.cur++
}

// escape applies the escape sequence at the start of b (b[0] is ESC).
func (s *screen) escape(b []byte) (int, bool) {
	if len(b) < 2 {
		return 0, false
	}
	switch b[1] {
	case '[':
	case '(', ')':
		if len(b) < 3 {
			return 0, false
		}
		return 3, true // character set selection
	default:
		return 2, true // ESC = , ESC > and the like
	}
	for i := 2; i < len(b); i++ {
		c := b[i]
		if c >= 0x40 && c <= 0x7e {
			s.csi(string(b[2:i]), c)
			return i + 1, true
		}
		if c < 0x20 || c > 0x3f || i >= maxEscape {
			return i, true // not a sequence we know: drop what was read
		}
	}
	return 0, false
}

// csi applies a control sequence with parameters params and final byte f.
func (s *screen) csi(params string, f byte) {
	n := 1
	if p, err := strconv.Atoi(strings.TrimLeft(strings.SplitN(params, ";", 2)[0], "?")); err == nil {
		n = p
	}
	switch f {
	case 'D':
		s.cur = max(0, s.cur-max(n, 1))
	case 'C':
		s.cur += max(n, 1)
	case 'G':
		s.cur = max(0, n-1)
	case 'J', 'K':
		switch params {
		case "", "0":
			if s.cur < len(s.cells) {
				s.cells = s.cells[:s.cur]
			}
		case "1":
			for i := 0; i < s.cur && i < len(s.cells); i++ {
				s.cells[i] = ' '
			}
		case "2", "3":
			s.cells = s.cells[:0]
		}
	case 'H', 'f':
		s.cur = 0
	}
	// SGR (m) and everything else change nothing a parser reads.
}

// line returns the current, unterminated line as shown (a prompt,
// typically).
func (s *screen) line() string { return string(s.cells) }

// pendingRaw returns the raw bytes of the current line.
func (s *screen) pendingRaw() []byte { return s.raw }

// caret renders raw device bytes for the transcript in the notation
// terminal users know: ESC as ^[, CR as ^M, other control bytes as ^X, a
// byte that is not UTF-8 as \xNN; tabs stay tabs.
func caret(raw []byte) string {
	var b strings.Builder
	for len(raw) > 0 {
		r, size := utf8.DecodeRune(raw)
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(raw[0]), 16))
		case r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + 0x40)
		case r == 0x7f:
			b.WriteString("^?")
		default:
			b.WriteRune(r)
		}
		raw = raw[size:]
	}
	return b.String()
}
