// Package version holds the build version embedded in every result.
package version

import "runtime/debug"

// Version is set at link time with -ldflags "-X ...version.Version=v1.2.3";
// otherwise it is read from the module's build information.
var Version = ""

// Commit is the commit the build was made from, set at link time with
// -ldflags "-X ...version.Commit=HASH" (scripts/release does); empty when
// not stamped.
var Commit = ""

// Long is String with the commit, when one was stamped: "v1.2.3 (commit
// 0123abcd…)". `wirebench version` prints it.
func Long() string {
	if Commit == "" {
		return String()
	}
	return String() + " (commit " + Commit + ")"
}

// String returns the version, or "devel" when none is known.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
