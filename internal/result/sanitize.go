package result

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Sanitize returns a deep copy of r that encoding/json can always encode
// and that keeps the document's shape: every NaN or infinite number
// becomes 0 and adds a warning naming its key ("receiver.jitter_ms was
// NaN, which JSON cannot carry: written as 0, do not trust it"), nil
// interval and warning lists become empty ones, and an empty schema and
// kind become Schema and KindTest. r itself is never changed.
// Sanitize(nil) is nil.
//
// Every writer of a test result (the JSON renderer, the results store,
// the matrix, latency and loopback documents) stores or prints Sanitize(r), so a
// figure that cannot be trusted says so in the same words everywhere.
func Sanitize(r *Result) *Result {
	if r == nil {
		return nil
	}
	out := new(Result)
	var bad []string
	cleanCopy(reflect.ValueOf(out).Elem(), reflect.ValueOf(r).Elem(), "", &bad)
	if out.Schema == "" {
		out.Schema = Schema
	}
	if out.Kind == "" {
		out.Kind = KindTest
	}
	if out.Intervals == nil {
		out.Intervals = []Interval{}
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	out.Warnings = append(out.Warnings, bad...)
	return out
}

// cleanCopy sets dst to a deep copy of src with non-finite floats replaced
// by 0, adding a warning to bad for each. path is the JSON path of src.
func cleanCopy(dst, src reflect.Value, path string, bad *[]string) {
	switch src.Kind() {
	case reflect.Float32, reflect.Float64:
		f := src.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			*bad = append(*bad, fmt.Sprintf("%s was %v, which JSON cannot carry: written as 0, do not trust it", path, f))
			f = 0
		}
		dst.SetFloat(f)
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		n := reflect.New(src.Type().Elem())
		cleanCopy(n.Elem(), src.Elem(), path, bad)
		dst.Set(n)
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		n := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			cleanCopy(n.Index(i), src.Index(i), path+"["+strconv.Itoa(i)+"]", bad)
		}
		dst.Set(n)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		n := reflect.MakeMapWithSize(src.Type(), src.Len())
		for it := src.MapRange(); it.Next(); {
			v := reflect.New(src.Type().Elem()).Elem()
			cleanCopy(v, it.Value(), fmt.Sprintf("%s[%v]", path, it.Key()), bad)
			n.SetMapIndex(it.Key(), v)
		}
		dst.Set(n)
	case reflect.Struct:
		dst.Set(src)
		for i := range src.NumField() {
			f := src.Type().Field(i)
			if f.IsExported() {
				cleanCopy(dst.Field(i), src.Field(i), joinPath(path, jsonName(f)), bad)
			}
		}
	default:
		dst.Set(src)
	}
}

// jsonName is the key encoding/json uses for a struct field.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" || name == "-" {
		return f.Name
	}
	return name
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
