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

// errWriter passes writes on to w and keeps the first error: output that
// could not be written (a full disk, a closed pipe) must not end in exit
// code 0. onErr, when set, is called once, at that first error.
type errWriter struct {
	mu    sync.Mutex
	w     io.Writer
	err   error
	onErr func(error)
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil {
		e.mu.Lock()
		first := e.err == nil
		if first {
			e.err = err
		}
		e.mu.Unlock()
		if first && e.onErr != nil {
			e.onErr(err)
		}
	}
	return n, err
}

// firstErr returns the first write error, if any.
func (e *errWriter) firstErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// logf prints an operational line to stderr.
func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.stderr, "wirebench: "+format+"\n", args...)
}
