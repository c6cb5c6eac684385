package result

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// fill populates every pointer, slice and float of v: pointers get a
// value, slices one element, floats f. It returns the floats it set.
func fill(v reflect.Value, f float64) int {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		v.SetFloat(f)
		return 1
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		return fill(v.Elem(), f)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		return fill(v.Index(0), f)
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				n += fill(v.Field(i), f)
			}
		}
		return n
	}
	return 0
}

// TestSanitizeEveryFloat sets every float field of the model, present and
// future, to NaN and to ±Inf: encoding must succeed with one warning per
// field, and the numbers must come out as 0.
func TestSanitizeEveryFloat(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		r := new(Result)
		n := fill(reflect.ValueOf(r).Elem(), f)
		r.Warnings = nil
		if n < 20 {
			t.Fatalf("only %d float fields found; the walk is broken", n)
		}
		b, err := json.Marshal(Sanitize(r))
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		var back Result
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if len(back.Warnings) != n {
			t.Errorf("%v: %d warnings for %d non-finite fields: %q", f, len(back.Warnings), n, back.Warnings)
		}
		if back.Link.TheoreticalBPS != 0 || back.Intervals[0].JitterMS != 0 {
			t.Errorf("%v: non-finite numbers not written as 0", f)
		}
	}
}

// TestSanitizeLeavesInputAlone: Sanitize copies; the NaN and the
// warnings of its input stay where they were, and nil stays nil.
func TestSanitizeLeavesInputAlone(t *testing.T) {
	r := &Result{Receiver: &Receiver{JitterMS: math.NaN()}, Intervals: []Interval{{JitterMS: math.Inf(1)}}}
	out := Sanitize(r)
	if !math.IsNaN(r.Receiver.JitterMS) || !math.IsInf(r.Intervals[0].JitterMS, 1) || len(r.Warnings) != 0 {
		t.Errorf("Sanitize changed its input: %+v", r)
	}
	if out.Receiver == r.Receiver || out.Receiver.JitterMS != 0 || out.Intervals[0].JitterMS != 0 {
		t.Errorf("Sanitize did not copy and clean: %+v", out)
	}
	want := []string{
		"intervals[0].jitter_ms was +Inf, which JSON cannot carry: written as 0, do not trust it",
		"receiver.jitter_ms was NaN, which JSON cannot carry: written as 0, do not trust it",
	}
	if strings.Join(out.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings %q, want %q", out.Warnings, want)
	}
	if out.Schema != Schema || out.Kind != KindTest {
		t.Errorf("schema %q kind %q", out.Schema, out.Kind)
	}
	if Sanitize(nil) != nil {
		t.Error("Sanitize(nil) != nil")
	}
}
