//go:build netlab

package sweep_test

// exactRates is true with the netlab build tag: the lab tests then also
// hold rates to the medium's within a few percent, which only a quiet
// machine can (a busy host's late tbf timers throw wire time away, and
// its sender stalls); without the tag they check what no load can
// change: nothing above the medium, a rate found.
const exactRates = true
