package version

import "testing"

func TestLong(t *testing.T) {
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	Version, Commit = "v1.2.3", ""
	if got := Long(); got != "v1.2.3" {
		t.Errorf("Long() without a commit = %q", got)
	}
	Commit = "0123abcd"
	if got := Long(); got != "v1.2.3 (commit 0123abcd)" {
		t.Errorf("Long() = %q", got)
	}
}
