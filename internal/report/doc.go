// Package report renders results into the forms people and programs read:
// iperf-style text (Text), one JSON document per test (WriteJSON, the
// wirebench/1 schema documented in docs/json.md), CSV rows for
// spreadsheets (WriteCSVHeader, WriteCSV), and the text of the latency
// documents (WriteLatency, WriteUnderLoad; docs/latency.md).
//
// Renderers measure nothing: every figure printed comes from a document
// type of internal/result. What they do add is care about the
// figures they cannot print honestly. A rate over a zero-length span, a
// loss percentage over zero datagrams, or a NaN or infinite value that
// slipped through is printed as "n/a" in text, left empty in CSV, and
// written as 0 with an added warning in JSON (encoding/json refuses
// non-finite numbers). Warnings and errors are always printed, last, so a
// reader cannot miss them.
//
// Output goes to an io.Writer. Each call writes whole lines with a single
// Write, so several Texts may share a writer whose Write is safe for
// concurrent use (an *os.File is) without their lines mixing.
package report
