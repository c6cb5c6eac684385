// Package web serves a wirebench server's dashboard: the tests in progress
// with live charts (server-sent events), the history of finished runs, a
// run's detail page (a test's intervals, a sweep's curve and cliffs, a
// matrix's cells, other kinds' figures), two runs compared figure by figure
// (internal/compare), a JSON API for all of it (/api/…), Prometheus metrics
// of the tests and echo tests the server answered (/metrics) and
// blackbox-style probes (/probe).
//
// It reads results and the live intervals a session.Server publishes through
// its callbacks (Attach) and the runs a History holds; it measures nothing
// itself, except through a /probe request, which runs one bounded
// session client test against an allowed target. The page is plain HTML,
// CSS and JavaScript embedded in the binary: it works with no network.
package web
