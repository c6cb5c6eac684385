package cli

import (
	"fmt"
	"io"
	"sync"
)

// outputFormat is how results are printed.
type outputFormat int

const (
	formatText outputFormat = iota
	formatJSON
	formatCSV
)

// pickFormat turns the --json/--csv flags into a format.
func pickFormat(json, csv bool) (outputFormat, error) {
	switch {
	case json && csv:
		return 0, usagef("choose one of --json and --csv")
	case json:
		return formatJSON, nil
	case csv:
		return formatCSV, nil
	}
	return formatText, nil
}

// syncWriter serialises writes from concurrent tests to one writer.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// logf prints an operational line to stderr.
func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.stderr, "wirebench: "+format+"\n", args...)
}
