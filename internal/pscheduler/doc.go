// Package pscheduler makes wirebench a perfSONAR pScheduler tool plugin.
// pScheduler runs a tool by calling its methods (enumerate, can-run,
// duration, participant-data, run, merged-results) with JSON on standard
// input and reading JSON from standard output; this package implements each
// method as a function from the decoded input to the value to print, for
// the pScheduler test types "throughput" (wirebench's session client and
// server) and "rtt" (wirebench's ICMP ping).
//
// Results follow the pScheduler test types' result schemas field by field
// (pscheduler-test-throughput and pscheduler-test-rtt validate.py): key
// names, ISO 8601 durations such as "PT0.000042S", throughput in bit/s,
// loss as a fraction from 0 to 1. Figures wirebench does not measure are
// left out, never written as zero.
//
// pScheduler task specs admit no tool-specific fields, so what a device
// needs (its iperf dialect and port) comes from the tool's configuration
// file, keyed by the test's destination; see Config.
package pscheduler
