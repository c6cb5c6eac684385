package check

import (
	"fmt"
	"slices"
	"strings"
)

// Short forms of figure paths, as criteria are usually written:
//
//   - in a matrix document, PROTO.DIRECTION.FIELD is the one-way cell's
//     figure: "udp.upload.bits_per_second" is
//     "cells[protocol=udp,direction=upload].bits_per_second"; and
//     PROTO.bidir.DIRECTION.FIELD (or PROTO.both.DIRECTION.FIELD) the
//     cell of the --bidir row, where both directions ran at once:
//     "cells[protocol=udp,direction=upload,simultaneous=true].…";
//   - in a test document, "loss_percent" is "receiver.loss_percent".
//
// resolve rewrites them into the path Lookup walks; any other path is
// returned as it is.

// bidirWords name the --bidir row in a short form; the first is the one
// suggestions use.
var bidirWords = []string{"bidir", "both"}

// directions are the directions of matrix cells.
var directions = []string{"upload", "download"}

// resolve returns the long form of p in doc, or p itself when it is not a
// short form there. Its error is a short form the document cannot have.
func resolve(doc any, p string) (string, error) {
	obj, ok := doc.(map[string]any)
	if !ok {
		return p, nil
	}
	switch obj["kind"] {
	case "matrix":
		return resolveMatrix(obj, p), nil
	case "test":
		if p != "loss_percent" {
			return p, nil
		}
		if tst, _ := obj["test"].(map[string]any); tst != nil && tst["protocol"] != "udp" {
			return "", &PathError{Path: p, Msg: fmt.Sprintf("unknown figure %q: loss_percent is a UDP figure, and this is a %v test", p, tst["protocol"])}
		}
		return "receiver.loss_percent", nil
	}
	return p, nil
}

// resolveMatrix rewrites a matrix short form into its cell selector.
func resolveMatrix(m map[string]any, p string) string {
	parts := strings.SplitN(p, ".", 4)
	if len(parts) < 3 || strings.ContainsAny(parts[0], "[]") {
		return p
	}
	if _, isKey := m[parts[0]]; isKey {
		return p
	}
	proto, bidir := parts[0], false
	dir, rest := parts[1], strings.Join(parts[2:], ".")
	if slices.Contains(bidirWords, parts[1]) && len(parts) == 4 {
		bidir, dir, rest = true, parts[2], parts[3]
	}
	if !slices.Contains(directions, dir) {
		return p
	}
	sel := "protocol=" + proto + ",direction=" + dir
	switch {
	case bidir:
		sel += ",simultaneous=true"
	case hasSimultaneous(m):
		sel += ",simultaneous=false"
	}
	return "cells[" + sel + "]." + rest
}

// hasSimultaneous reports whether the matrix has a --bidir row, so that
// a one-way cell needs simultaneous=false to be told from its bidir twin.
func hasSimultaneous(m map[string]any) bool {
	cells, _ := m["cells"].([]any)
	for _, c := range cells {
		if cell, ok := c.(map[string]any); ok && cell["simultaneous"] == true {
			return true
		}
	}
	return false
}

// shortCell is the short-form prefix of a matrix cell ("udp.upload",
// "udp.bidir.download"), or "" for an element that is not a cell.
func shortCell(el any) string {
	cell, ok := el.(map[string]any)
	if !ok {
		return ""
	}
	proto, _ := cell["protocol"].(string)
	dir, _ := cell["direction"].(string)
	if proto == "" || strings.ContainsAny(proto, ".[]") || !slices.Contains(directions, dir) {
		return ""
	}
	if cell["simultaneous"] == true {
		return proto + "." + bidirWords[0] + "." + dir
	}
	return proto + "." + dir
}
