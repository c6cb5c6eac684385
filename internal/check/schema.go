package check

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// A criterion's path is checked against the Go type of its step's document
// before any step runs, so a misspelt figure ("receiver.bits_per_secnd")
// stops the plan at once rather than after the steps before it have
// measured for minutes. The check only refuses what no document of the
// kind can hold: where the type cannot say (a value with its own JSON
// encoding, an interface, a map's keys, a selector's values) it lets the
// path through, and Lookup judges it on the document itself.

// derivedKeys are the figures check adds to a type's JSON (withDerived).
var derivedKeys = map[reflect.Type]map[string]reflect.Type{
	reflect.TypeFor[result.Receiver](): {"loss_percent": reflect.TypeFor[float64]()},
}

// plainJSON are types whose MarshalJSON writes some of their fields as
// encoding/json would and nothing else, so their fields can be checked.
var plainJSON = map[reflect.Type]bool{reflect.TypeFor[result.Interval](): true}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// CheckPaths checks every criterion's figure path against the fields of
// its step's document kind; its error wraps ErrPlan and names the first
// path no such document can hold, with the valid path nearest to it.
func (p *Plan) CheckPaths() error {
	for _, s := range p.Steps {
		kind := Kinds[s.Kind]
		if kind.Doc == nil {
			continue
		}
		for _, c := range s.Criteria {
			if err := checkPath(kind, c.Path); err != nil {
				return fmt.Errorf("%w: step %q: %v", ErrPlan, s.Name, err)
			}
		}
	}
	return nil
}

// checkPath returns a *PathError when p, in its short form or its long
// one, cannot address a number in a document of kind k.
func checkPath(k Kind, p string) error {
	skeleton := map[string]any{}
	for name := range jsonFields(k.Doc) {
		skeleton[name] = nil
	}
	skeleton["kind"] = k.DocKind
	long, err := resolve(skeleton, p)
	if err != nil {
		return err
	}
	segs, err := splitPath(long)
	if err != nil {
		return err
	}
	t := k.Doc
	for i, s := range segs {
		if s.key != "" {
			next, bad := fieldType(t, s.key)
			if bad != "" {
				return unknownStatic(k, p, long, segs, i, t, bad)
			}
			if next == nil {
				return nil // the type cannot say: Lookup judges
			}
			t = next
		}
		if s.sel != nil {
			t = deref(t)
			if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
				return &PathError{Path: p, Msg: fmt.Sprintf("unknown figure %q: at %q, a selector needs a list, and this is %s", p, s.raw, typeWord(t))}
			}
			t = t.Elem()
		}
	}
	if t = deref(t); !opaque(t) && !numeric(t) {
		return &PathError{Path: p, Msg: fmt.Sprintf("unknown figure %q: it is %s, not a number", p, typeWord(t))}
	}
	return nil
}

// fieldType is the type under key in t: nil when the type cannot say;
// bad, when t can have no such key, says so after the value's name
// ("has no key …").
func fieldType(t reflect.Type, key string) (next reflect.Type, bad string) {
	t = deref(t)
	if opaque(t) {
		return nil, ""
	}
	switch t.Kind() {
	case reflect.Struct:
		if f, ok := jsonFields(t)[key]; ok {
			return f, ""
		}
		return nil, fmt.Sprintf("has no key %q", key)
	case reflect.Map:
		return t.Elem(), ""
	case reflect.Slice, reflect.Array:
		if i, err := strconv.Atoi(key); err != nil || i < 0 {
			return nil, fmt.Sprintf("is a list: an element is picked by its index or by [key=value], not by %q", key)
		}
		return t.Elem(), ""
	}
	return nil, fmt.Sprintf("is %s, with no key %q", typeWord(t), key)
}

// unknownStatic is the error for the key of segs[i], which t lacks: it
// names the key of t nearest to it, in the path as the plan wrote it.
func unknownStatic(k Kind, p, long string, segs []segment, i int, t reflect.Type, why string) error {
	what := fmt.Sprintf("%q", p)
	if long != p {
		what = fmt.Sprintf("%q (short for %q)", p, long)
	}
	subject := fmt.Sprintf("a %s document", k.DocKind)
	if i > 0 {
		subject = fmt.Sprintf("in a %s document, %q", k.DocKind, strings.Join(raws(segs[:i]), "."))
	}
	msg := fmt.Sprintf("unknown figure %s: %s %s", what, subject, why)
	pe := &PathError{Path: p, Msg: msg}
	fields := jsonFields(deref(t))
	best, bestD := "", -1
	for name := range fields {
		if d := editDistance(segs[i].key, name); bestD < 0 || d < bestD || d == bestD && name < best {
			best, bestD = name, d
		}
	}
	if best == "" {
		return pe
	}
	if bestD > max(2, len(segs[i].key)/3) {
		names := slices.Sorted(maps.Keys(fields))
		pe.Msg += "; the keys there are " + strings.Join(names, ", ")
		return pe
	}
	tail := strings.Join(raws(segs[i:]), ".")
	fixed := segs[i]
	fixed.raw = best + strings.TrimPrefix(fixed.raw, fixed.key)
	newTail := strings.Join(append([]string{fixed.raw}, raws(segs[i+1:])...), ".")
	near := strings.Join(raws(segs[:i]), ".")
	near = join(near, newTail)
	if strings.HasSuffix(p, tail) {
		near = strings.TrimSuffix(p, tail) + newTail
	}
	pe.Near = []string{near}
	pe.Msg += fmt.Sprintf("; did you mean %q?", near)
	return pe
}

// jsonFields maps the JSON keys of struct type t to their types, as
// encoding/json writes them (embedded structs' fields inlined), with the
// figures check derives.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	if t = deref(t); t.Kind() != reflect.Struct {
		return out
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && deref(f.Type).Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	for k, v := range derivedKeys[t] {
		out[k] = v
	}
	return out
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// opaque says the type's JSON cannot be told from its fields: its own
// encoding, or any value at all.
func opaque(t reflect.Type) bool {
	if plainJSON[t] {
		return false
	}
	return t.Kind() == reflect.Interface || t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)
}

func numeric(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// typeWord names a JSON value of type t: "an object", "a list", ….
func typeWord(t reflect.Type) string {
	switch {
	case numeric(t):
		return "a number"
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		return "an object"
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		return "a list"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "a boolean"
	}
	return "a " + t.Kind().String()
}
