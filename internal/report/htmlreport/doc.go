// Package htmlreport renders wirebench's JSON documents (client and server
// test results, matrix, sweep, ping, request/response latency and latency
// under load) as one self-contained HTML page: inline CSS, charts as inline
// SVG, no scripts, fonts or links to fetch, so it opens with no network.
// The same charts can be written as PNG files. It renders, it measures
// nothing.
//
// The renderer takes decoded documents (Document), not file names, so a
// results store can hand it runs it has kept. It reads each document by
// its JSON keys (docs/json.md, docs/matrix.md) rather than through the Go
// types of the packages that write them: those sit on higher floors, and a
// document written by another version still renders — every number it
// holds appears in the page's tables, whether or not a chart knows it.
package htmlreport
