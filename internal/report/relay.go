package report

import (
	"fmt"
	"io"
	"sort"

	"github.com/wirebench/wirebench/internal/result"
)

// WriteRelay prints a relay's or a reflector's closing document in plain
// lines.
func WriteRelay(w io.Writer, r *result.Relay) {
	name := map[string]string{"relay": "relay", "reflect": "reflector"}[r.Kind]
	fmt.Fprintf(w, "%s %s", name, r.Listen)
	if r.To != "" {
		fmt.Fprintf(w, " -> %s", r.To)
	}
	fmt.Fprintf(w, ", model %q, seed %d, %.1f s", r.Model, r.Seed, r.Duration)
	if r.Kind == "relay" {
		fmt.Fprintf(w, ", %d client sources", r.Flows)
	}
	fmt.Fprintln(w)
	dir := "forward"
	if r.Kind == "reflect" {
		dir = "reflected"
	}
	writeRelayCounts(w, dir, r.Datagrams)
	if r.Reverse != nil {
		writeRelayCounts(w, "reverse", *r.Reverse)
	}
	if t := r.TCP; t != nil {
		fmt.Fprintf(w, "  tcp       %d connections (%d refused by the target), %d bytes forward, %d bytes back\n",
			t.Connections, t.Failed, t.BytesForward, t.BytesReverse)
	}
	for _, s := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
}

// writeRelayCounts prints what one direction of a relay did.
func writeRelayCounts(w io.Writer, dir string, c result.RelayCounts) {
	fmt.Fprintf(w, "  %-9s datagrams: %d in, %d forwarded, %d dropped, %d duplicated, %d corrupted",
		dir, c.In, c.Forwarded, c.Dropped, c.Duplicated, c.Corrupted)
	if len(c.DroppedBy) > 0 {
		keys := make([]string, 0, len(c.DroppedBy))
		for k := range c.DroppedBy {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprint(w, " (")
		for i, k := range keys {
			if i > 0 {
				fmt.Fprint(w, ", ")
			}
			fmt.Fprintf(w, "%s %d", k, c.DroppedBy[k])
		}
		fmt.Fprint(w, ")")
	}
	fmt.Fprintln(w)
	d := c.Data
	fmt.Fprintf(w, "  %-9s iperf2 data: %d in, %d forwarded, %d dropped, %d reordered, %d duplicated, %d corrupted\n",
		"", d.In, d.Forwarded, d.Dropped, d.Reordered, d.Duplicated, d.Corrupted)
}
