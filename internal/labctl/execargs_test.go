package labctl

import (
	"slices"
	"testing"
)

// TestExecArgs: the host comes first, a "--" after it is dropped, and a
// missing command or an unknown host is refused.
func TestExecArgs(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		host     string
		argv     []string
		mistaken bool
	}{
		{[]string{"b", "--", "wirebench", "server"}, "b", []string{"wirebench", "server"}, false},
		{[]string{"a", "ls", "-l"}, "a", []string{"ls", "-l"}, false},
		{[]string{"r", "--", "--"}, "r", []string{"--"}, false},
		{[]string{"a", "--"}, "", nil, true},
		{[]string{"a"}, "", nil, true},
		{[]string{"q", "ls"}, "", nil, true},
	} {
		host, argv, err := ExecArgs(tt.args)
		if (err != nil) != tt.mistaken || host != tt.host || !slices.Equal(argv, tt.argv) {
			t.Errorf("ExecArgs(%q) = %q, %q, %v", tt.args, host, argv, err)
		}
	}
}
