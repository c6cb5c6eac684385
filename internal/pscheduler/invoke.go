package pscheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Methods are the plugin methods Invoke answers.
var Methods = []string{"enumerate", "can-run", "duration", "participant-data", "run", "merged-results"}

// Invoke runs one plugin method: it reads the method's JSON input from in
// (enumerate reads nothing) and writes its JSON output to out. An error
// means the method itself failed (bad input); a test that ran and failed
// is a result with "succeeded": false and a nil error.
func Invoke(ctx context.Context, method string, in io.Reader, out io.Writer, cfg Config) error {
	var v any
	var err error
	switch method {
	case "enumerate":
		v = Enumerate()
	case "can-run":
		var t Test
		if err = decode(in, &t); err == nil {
			v = CanRun(t, cfg)
		}
	case "duration":
		var t Test
		if err = decode(in, &t); err == nil {
			v, err = Duration(t, cfg)
		}
	case "participant-data":
		var p ParticipantInput
		if err = decode(in, &p); err == nil {
			v, err = ParticipantData(p, cfg)
		}
	case "run":
		var r RunInput
		if err = decode(in, &r); err == nil {
			v, err = run(ctx, r, cfg)
		}
	case "merged-results":
		var m MergeInput
		if err = decode(in, &m); err == nil {
			v, err = Merge(m)
		}
	default:
		return fmt.Errorf("unknown method %q (want one of %s)", method, strings.Join(Methods, ", "))
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// run runs the test of r.
func run(ctx context.Context, r RunInput, cfg Config) (any, error) {
	switch r.Test.Type {
	case TestThroughput:
		return RunThroughput(ctx, r, cfg), nil
	case TestRTT:
		return RunRTT(ctx, r), nil
	}
	return nil, fmt.Errorf("run: unsupported test type %q", r.Test.Type)
}

// decode reads one JSON document from in.
func decode(in io.Reader, v any) error {
	if err := json.NewDecoder(in).Decode(v); err != nil {
		return fmt.Errorf("reading the method's JSON input: %w", err)
	}
	return nil
}
