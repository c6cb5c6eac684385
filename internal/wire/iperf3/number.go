package iperf3

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// errNotNumber is returned when a JSON value that must be a number is not one.
var errNotNumber = errors.New("not a json number")

// parseInt64 converts the text of a JSON number into an int64 the way iperf3
// peers mean it (§4.3 of wire-protocols.md):
//
//   - plain integers are taken as they are;
//   - integers in [2^63, 2^64) are unsigned 64-bit values that wrap around
//     (3.12 and 3.13 print −1 as 18446744073709551615);
//   - numbers in float syntax (cJSON prints large values as %1.15g or %1.17g,
//     e.g. 1e+16) are truncated toward zero when they fit.
//
// Anything else (strings, booleans, null, NaN, values out of range) is an error.
func parseInt64(raw []byte) (int64, error) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || !isNumberText(s) {
		return 0, fmt.Errorf("%w: %.32q", errNotNumber, s)
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return int64(u), nil // wrap-around: 2^64-1 → −1
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("number %.32q out of range", s)
	}
	switch {
	case f >= -(1<<63) && f < 1<<63:
		return int64(f), nil
	case f >= 1<<63 && f < 1<<64:
		return int64(uint64(f)), nil
	}
	return 0, fmt.Errorf("number %.32q out of range", s)
}

// parseFloat64 converts the text of a JSON number into a float64.
func parseFloat64(raw []byte) (float64, error) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || !isNumberText(s) {
		return 0, fmt.Errorf("%w: %.32q", errNotNumber, s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("number %.32q out of range", s)
	}
	return f, nil
}

// isNumberText reports whether s starts like a JSON number. The JSON decoder
// already guaranteed the syntax of the whole value; this only rules out
// strings, literals, objects and arrays.
func isNumberText(s string) bool {
	c := s[0]
	return c == '-' || (c >= '0' && c <= '9')
}

// Int64 is an int64 that decodes from any JSON number an iperf3 peer may send
// (see parseInt64) and encodes as a plain JSON integer.
type Int64 int64

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int64) UnmarshalJSON(b []byte) error {
	v, err := parseInt64(b)
	if err != nil {
		return err
	}
	*n = Int64(v)
	return nil
}

// objectFields splits a JSON object into its members. A later duplicate key
// wins, as with encoding/json. It fails when b is not a JSON object.
func objectFields(b []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("not a json object")
	}
	return m, nil
}

// fieldReader pulls typed values out of an object's members and remembers
// the first error, naming the key.
type fieldReader struct {
	m   map[string]json.RawMessage
	err error
}

func (f *fieldReader) fail(key string, err error) {
	if f.err == nil {
		f.err = fmt.Errorf("key %q: %w", key, err)
	}
}

// has reports whether key is present (the iperf3 presence rule).
func (f *fieldReader) has(key string) bool {
	_, ok := f.m[key]
	return ok
}

// int64 reads an optional integer; ok is false when the key is absent.
func (f *fieldReader) int64(key string) (v int64, ok bool) {
	raw, ok := f.m[key]
	if !ok {
		return 0, false
	}
	v, err := parseInt64(raw)
	if err != nil {
		f.fail(key, err)
		return 0, false
	}
	return v, true
}

// mustInt64 reads a required integer.
func (f *fieldReader) mustInt64(key string) int64 {
	v, ok := f.int64(key)
	if !ok && f.err == nil {
		f.fail(key, errMissing)
	}
	return v
}

// float64 reads an optional number.
func (f *fieldReader) float64(key string) (v float64, ok bool) {
	raw, ok := f.m[key]
	if !ok {
		return 0, false
	}
	v, err := parseFloat64(raw)
	if err != nil {
		f.fail(key, err)
		return 0, false
	}
	return v, true
}

// mustFloat64 reads a required number.
func (f *fieldReader) mustFloat64(key string) float64 {
	v, ok := f.float64(key)
	if !ok && f.err == nil {
		f.fail(key, errMissing)
	}
	return v
}

// string reads an optional string.
func (f *fieldReader) string(key string) string {
	raw, ok := f.m[key]
	if !ok {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		f.fail(key, errors.New("not a json string"))
	}
	return s
}

// errMissing marks a required key that is absent.
var errMissing = errors.New("required key missing")
