package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A path addresses one number in a JSON document: object keys joined by
// dots ("receiver.bits_per_second"); an array element by its index
// ("intervals.0.bits_per_second") or by the values of its own keys in
// brackets ("cells[protocol=udp,direction=upload].bits_per_second",
// "sizes[size=1472].loss_pct"), which must match exactly one element.

// segment is one step of a path: a key, then optionally a selector.
type segment struct {
	key string            // object key, or "" for a bare selector
	sel map[string]string // [k=v,...]; nil without
	raw string
}

func splitPath(p string) ([]segment, error) {
	var segs []segment
	for rest := p; rest != ""; {
		var part string
		depth, cut := 0, -1
		for i, r := range rest {
			switch r {
			case '[':
				depth++
			case ']':
				depth--
			case '.':
				if depth == 0 && cut < 0 {
					cut = i
				}
			}
		}
		if cut >= 0 {
			part, rest = rest[:cut], rest[cut+1:]
		} else {
			part, rest = rest, ""
		}
		seg := segment{raw: part}
		if i := strings.IndexByte(part, '['); i >= 0 {
			if !strings.HasSuffix(part, "]") || strings.Count(part, "[") != 1 {
				return nil, fmt.Errorf("path %q: %q: a selector is written key[k=v,k2=v2]", p, part)
			}
			seg.key, seg.sel = part[:i], map[string]string{}
			for _, kv := range strings.Split(part[i+1:len(part)-1], ",") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || strings.TrimSpace(k) == "" {
					return nil, fmt.Errorf("path %q: selector %q: want k=v pairs, like [protocol=udp,direction=upload]", p, part)
				}
				seg.sel[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		} else {
			seg.key = part
		}
		if seg.key == "" && seg.sel == nil {
			return nil, fmt.Errorf("path %q: an empty step (two dots, or a dot at an end)", p)
		}
		segs = append(segs, seg)
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("empty path")
	}
	return segs, nil
}

// Lookup returns the number at path p in doc (decoded with UseNumber or
// plain encoding/json), p in the long form or a short form (alias.go). An
// unknown path is an error that names the valid paths nearest to it; a
// null, or a selector into an empty array (nothing was measured there),
// is an error wrapping ErrNull.
func Lookup(doc any, p string) (float64, error) {
	long, err := resolve(doc, p)
	if err != nil {
		return 0, err
	}
	segs, err := splitPath(long)
	if err != nil {
		return 0, err
	}
	cur, parent := doc, any(nil)
	for i, s := range segs {
		where := strings.Join(raws(segs[:i+1]), ".")
		parent = cur
		if s.key != "" {
			cur, err = child(cur, s.key)
			if err != nil {
				return 0, unknownPath(doc, p, long, where, err)
			}
		}
		if s.sel != nil {
			if arr, ok := cur.([]any); ok && len(arr) == 0 {
				arr := join(strings.Join(raws(segs[:i]), "."), s.key)
				return 0, fmt.Errorf("figure %s: %w (%s is empty: nothing was measured there%s)", p, ErrNull, arr, note(parent, s.key))
			}
			cur, err = selectOne(cur, s.sel)
			if err != nil {
				return 0, unknownPath(doc, p, long, where, err)
			}
		}
	}
	switch v := cur.(type) {
	case float64:
		return v, nil
	case json.Number:
		return v.Float64()
	case nil:
		if be := boundOfKey(parent, segs[len(segs)-1].key, p); be != nil {
			return 0, be
		}
		return 0, fmt.Errorf("figure %s: %w (the document has no value for it; docs/json.md says why per key)", p, ErrNull)
	}
	return 0, unknownPath(doc, p, long, long, fmt.Errorf("it is a %s, not a number", typeName(cur)))
}

// note is ": " and the KEY_note of obj, where a document says why KEY
// is empty (an RFC 2544 size's latency_note), or "".
func note(obj any, key string) string {
	if o, ok := obj.(map[string]any); ok {
		if n, _ := o[key+"_note"].(string); n != "" {
			return ": " + n
		}
	}
	return ""
}

func raws(segs []segment) []string {
	out := make([]string, len(segs))
	for i, s := range segs {
		out[i] = s.raw
	}
	return out
}

func child(cur any, key string) (any, error) {
	switch v := cur.(type) {
	case map[string]any:
		c, ok := v[key]
		if !ok {
			return nil, fmt.Errorf("no key %q", key)
		}
		return c, nil
	case []any:
		i, err := strconv.Atoi(key)
		if err != nil || i < 0 || i >= len(v) {
			return nil, fmt.Errorf("%q is not an index of this array of %d", key, len(v))
		}
		return v[i], nil
	}
	return nil, fmt.Errorf("a %s has no key %q", typeName(cur), key)
}

func selectOne(cur any, sel map[string]string) (any, error) {
	arr, ok := cur.([]any)
	if !ok {
		return nil, fmt.Errorf("a selector needs an array, this is a %s", typeName(cur))
	}
	var found []any
	for _, el := range arr {
		obj, ok := el.(map[string]any)
		if !ok {
			continue
		}
		match := true
		for k, want := range sel {
			if scalarString(obj[k]) != want {
				match = false
				break
			}
		}
		if match {
			found = append(found, el)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("the selector matches %d elements, not one", len(found))
	}
	return found[0], nil
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return "\x00" // matches no typed value
}

func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "number"
}

// ErrNull is Lookup's error for a figure that is null in the document
// (e.g. a matrix cell that has no figure): the run measured nothing there.
var ErrNull = errors.New("null in this run")

// maxSuggestions is how many valid paths an unknown-path error names.
const maxSuggestions = 6

func unknownPath(doc any, p, long, where string, why error) error {
	near := NearestPaths(doc, p, maxSuggestions)
	msg := fmt.Sprintf("unknown figure %q: at %q, %v", p, where, why)
	if long != p {
		msg = fmt.Sprintf("unknown figure %q (short for %q): at %q, %v", p, long, where, why)
	}
	if len(near) > 0 {
		msg += "; valid figures near it: " + strings.Join(near, ", ")
		if isMatrix(doc) && slices.ContainsFunc(near, func(n string) bool { l, _ := resolve(doc, n); return l != n }) {
			msg += " (PROTO.DIRECTION.FIELD is short for cells[protocol=PROTO,direction=DIRECTION].FIELD, PROTO.bidir.DIRECTION.FIELD for the --bidir row's cell)"
		}
	}
	return &PathError{Path: p, Msg: msg, Near: near}
}

func isMatrix(doc any) bool {
	obj, ok := doc.(map[string]any)
	return ok && obj["kind"] == "matrix"
}

// PathError is an unknown or unusable figure path.
type PathError struct {
	Path string
	Msg  string
	// Near are the valid paths nearest to Path.
	Near []string
}

func (e *PathError) Error() string { return e.Msg }

// idKeys are the keys that name an array element in a suggested path,
// in the order they are written.
var idKeys = []string{"protocol", "direction", "flow", "size", "name", "load_percent", "offered_percent"}

// Paths lists the paths of every number in doc, array elements by their
// identifying keys where they have some, else by index (only the first
// element of such an array, standing for all); a matrix's cells by their
// short form ("udp.upload.bits_per_second").
func Paths(doc any) []string {
	var out []string
	matrix := isMatrix(doc)
	var walk func(v any, prefix string)
	walk = func(v any, prefix string) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				walk(c, join(prefix, k))
			}
		case []any:
			for i, el := range x {
				if short := shortCell(el); matrix && prefix == "cells" && short != "" {
					walk(el, short)
					continue
				}
				if sel := selector(el); sel != "" {
					walk(el, prefix+sel)
					continue
				}
				if i == 0 {
					walk(el, join(prefix, "0"))
				}
			}
		case float64, json.Number:
			out = append(out, prefix)
		}
	}
	walk(doc, "")
	sort.Strings(out)
	return out
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func selector(el any) string {
	obj, ok := el.(map[string]any)
	if !ok {
		return ""
	}
	var kv []string
	for _, k := range idKeys {
		if s := scalarString(obj[k]); s != "\x00" {
			kv = append(kv, k+"="+s)
		}
	}
	if len(kv) == 0 {
		return ""
	}
	return "[" + strings.Join(kv, ",") + "]"
}

// NearestPaths returns up to n of doc's paths nearest to p by edit
// distance, nearest first.
func NearestPaths(doc any, p string, n int) []string {
	all := Paths(doc)
	type scored struct {
		path string
		d    int
	}
	s := make([]scored, len(all))
	for i, a := range all {
		d := editDistance(p, a)
		// A short form is as near as its long form.
		if long, err := resolve(doc, a); err == nil && long != a {
			d = min(d, editDistance(p, long))
		}
		// A path that ends with the same key is nearer than its spelling says.
		if last(p) == last(a) {
			d -= len(last(p))
		}
		s[i] = scored{a, d}
	}
	sort.SliceStable(s, func(i, j int) bool { return s[i].d < s[j].d })
	var out []string
	for i := 0; i < len(s) && i < n; i++ {
		out = append(out, s[i].path)
	}
	return out
}

func last(p string) string {
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
