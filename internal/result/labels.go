package result

import (
	"net"
	"sort"
	"strings"
)

// Labels are the labels a test result carries by itself: its protocol,
// direction, dialect, peer host (without the port) and role. Empty values
// are left out. The results store saves a test under these labels (a
// user's --label of the same key wins), and history and the dashboard
// filter on them; the map is new on every call, so the caller may add to
// it.
func (r *Result) Labels() map[string]string {
	l := map[string]string{}
	set := func(k, v string) {
		if v != "" {
			l[k] = v
		}
	}
	set("protocol", r.Test.Protocol)
	set("direction", r.Test.Direction)
	set("dialect", r.Test.Dialect)
	host := r.Test.Peer
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	set("peer", host)
	set("role", r.Role)
	return l
}

// FormatLabels writes labels as the store, history, show and compare
// print them: k=v,k2=v2, sorted by key; "" without labels.
func FormatLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, ",")
}
