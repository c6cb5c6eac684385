//go:build unix && !linux

package sockopt

// kernelDoubles: the BSDs report the buffer size they were given.
const kernelDoubles = false

func setCongestion(uintptr, string) error { return errUnsupported }

func sysctlMax(string) (int, bool) { return 0, false }
