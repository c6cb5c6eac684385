// Package iperfargs reads iperf's way of choosing the mode on the command
// line (-s, -c HOST and their spellings) and turns it into wirebench's
// subcommands. It parses nothing else: the flags that follow are the cli's.
package iperfargs

import (
	"slices"
	"strings"
)

// Rewrite turns iperf-style invocations into subcommands, so that
// "-s ..." becomes "server ..." and "-c HOST ..." (also "-cHOST",
// "--client HOST", "--client=HOST", "-uc HOST") becomes "client HOST ...".
// As in iperf 2 and iperf3, -v or --version anywhere in such an
// invocation ("-v", "-s -v", "-c HOST -v") asks for the version: it becomes
// "version". Arguments that already start with a subcommand are returned
// unchanged.
func Rewrite(args []string) []string {
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") && args[0] != "" {
		return args
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-v" || a == "--version" {
			return []string{"version"}
		}
	}
	for i, a := range args {
		if a == "--" {
			break
		}
		switch {
		case a == "-s" || a == "--server":
			return append([]string{"server"}, without(args, i, 1)...)
		case a == "--client" || a == "-c":
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				return append([]string{"client", args[i+1]}, without(args, i, 2)...)
			}
			// No host: "client" without one says so.
			return append([]string{"client"}, without(args, i, 1)...)
		case strings.HasPrefix(a, "--client="):
			return append([]string{"client", strings.TrimPrefix(a, "--client=")}, without(args, i, 1)...)
		case len(a) > 2 && a[0] == '-' && a[1] != '-':
			// A group of short flags: -c may end it ("-uc HOST") or carry
			// its value ("-c10.0.0.1", "-uc10.0.0.1"); -s may stand in it.
			if j := strings.IndexByte(a, 'c'); j > 0 && onlyBoolShorts(a[1:j]) {
				rest := a[1:j]
				var host string
				var drop int
				if j == len(a)-1 {
					if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
						return append([]string{"client", "-" + rest}, without(args, i, 1)...)
					}
					host, drop = args[i+1], 2
				} else {
					host, drop = a[j+1:], 1
				}
				out := []string{"client", host}
				if rest != "" {
					out = append(out, "-"+rest)
				}
				return append(out, without(args, i, drop)...)
			}
			if j := strings.IndexByte(a, 's'); j > 0 && onlyBoolShorts(a[1:]) {
				return append([]string{"server", "-" + strings.Replace(a[1:], "s", "", 1)}, without(args, i, 1)...)
			}
		}
	}
	return args
}

// onlyBoolShorts reports whether every letter is a short boolean flag that
// may be grouped with -c or -s.
func onlyBoolShorts(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("uRrdDs1NV", r) {
			return false
		}
	}
	return true
}

// without returns args with n elements removed at i.
func without(args []string, i, n int) []string {
	out := make([]string, 0, len(args)-n)
	out = append(out, args[:i]...)
	return append(out, args[i+n:]...)
}

// JoinOptional turns "--flag value" into "--flag=value" for the flags
// whose value is optional (cobra's NoOptDefVal), optional mapping each to
// the values it takes: written apart, cobra would take the value for an
// argument (a host name). Nothing after "--" is touched.
func JoinOptional(args []string, optional map[string][]string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if vals, ok := optional[a]; ok && i+1 < len(args) && slices.Contains(vals, args[i+1]) {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}
