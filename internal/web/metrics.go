package web

import (
	"math"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/result"
)

// Metrics are a server's Prometheus metrics. Their labels take a few
// values each: protocol (tcp, udp), dialect (the server's dialects, else
// "other") and outcome (ok, warnings, error); never a port or a test id.
type Metrics struct {
	reg        *prometheus.Registry
	started    *prometheus.CounterVec
	finished   *prometheus.CounterVec
	recvBytes  *prometheus.CounterVec
	sentBytes  *prometheus.CounterVec
	recvDgrams *prometheus.CounterVec
	lost       *prometheus.CounterVec
	ooo        *prometheus.CounterVec
	dups       *prometheus.CounterVec
	lastBPS    *prometheus.GaugeVec
	lastLost   *prometheus.GaugeVec
	lastJitter *prometheus.GaugeVec
	lastEnd    *prometheus.GaugeVec
	lastWarn   *prometheus.GaugeVec
	lastPct    *prometheus.GaugeVec

	// Echo (request/response latency) tests, by kind (udp, tcp).
	echoTests    *prometheus.CounterVec
	echoConnects prometheus.Counter
	echoReqs     *prometheus.CounterVec
	echoBytes    *prometheus.CounterVec
	echoLastReqs *prometheus.GaugeVec
	echoLastDur  *prometheus.GaugeVec
	echoLastEnd  *prometheus.GaugeVec
	echoLastRTT  *prometheus.GaugeVec
}

// NewMetrics returns the metrics of a server whose number of tests in
// progress active reports, registered with the Go runtime and process
// collectors.
func NewMetrics(active func() int) *Metrics {
	const ns = "wirebench_server_"
	pd := []string{"protocol", "dialect"}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: ns + name, Help: help}, labels)
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: ns + "last_test_" + name, Help: help}, []string{"protocol"})
	}
	echoGauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: ns + "echo_last_test_" + name, Help: help}, []string{"kind"})
	}
	m := &Metrics{
		reg:        prometheus.NewRegistry(),
		started:    counter("tests_started_total", "Tests accepted (each stream of a parallel test counts once).", pd...),
		finished:   counter("tests_total", "Tests finished, by outcome: ok, warnings (a figure should not be trusted as it stands), error (ended early or refused).", "protocol", "dialect", "outcome"),
		recvBytes:  counter("received_bytes_total", "Payload bytes this server received in finished tests.", pd...),
		sentBytes:  counter("sent_bytes_total", "Payload bytes this server sent in finished tests (reverse, connect-back, bidirectional).", pd...),
		recvDgrams: counter("received_datagrams_total", "UDP datagrams this server received in finished tests.", "dialect"),
		lost:       counter("lost_datagrams_total", "UDP datagrams this server counted lost in finished tests.", "dialect"),
		ooo:        counter("out_of_order_datagrams_total", "UDP datagrams this server received out of order in finished tests.", "dialect"),
		dups:       counter("duplicate_datagrams_total", "UDP datagrams this server received more than once in finished tests.", "dialect"),
		lastBPS:    gauge("bits_per_second", "Receiver goodput of the last finished test, bit/s of payload."),
		lastLost:   gauge("lost_ratio", "Lost datagrams over datagrams expected in the last finished UDP test (0..1)."),
		lastJitter: gauge("jitter_seconds", "Receiver jitter of the last finished UDP test, seconds."),
		lastEnd:    gauge("end_timestamp_seconds", "When the last test finished, Unix time."),
		lastWarn:   gauge("warnings", "Number of warnings of the last finished test."),
		lastPct:    gauge("percent_of_medium", "Receiver goodput of the last finished test as a percentage of what the medium (--medium) allows."),

		echoTests: counter("echo_tests_total", "Echo (request/response latency) tests answered, by kind (udp, tcp) and outcome: ok (the client said bye or closed), timeout (the client went silent for the idle timeout), error (a malformed message, an I/O error or the server stopping).", "kind", "outcome"),
		echoConnects: prometheus.NewCounter(prometheus.CounterOpts{Name: ns + "echo_connect_probes_total",
			Help: "Connect-latency probes answered: TCP connections that only said bye (each probe of a connect test is one)."}),
		echoReqs:     counter("echo_requests_total", "Echo requests answered in finished echo tests.", "kind"),
		echoBytes:    counter("echo_request_bytes_total", "Bytes of the echo requests answered in finished echo tests.", "kind"),
		echoLastReqs: echoGauge("requests", "Echo requests answered in the last finished echo test."),
		echoLastDur:  echoGauge("duration_seconds", "Time from the first to the last message of the last finished echo test, as this server saw it."),
		echoLastEnd:  echoGauge("end_timestamp_seconds", "When the last echo test finished, Unix time."),
		echoLastRTT:  echoGauge("kernel_rtt_seconds", "The kernel's smoothed RTT (tcp_info) of the last finished TCP echo test's connection, as this server's TCP saw it (delayed ACKs count); not the client's RTT, which is in its own result."),
	}
	m.reg.MustRegister(m.started, m.finished, m.recvBytes, m.sentBytes, m.recvDgrams, m.lost, m.ooo, m.dups,
		m.lastBPS, m.lastLost, m.lastJitter, m.lastEnd, m.lastWarn, m.lastPct,
		m.echoTests, m.echoConnects, m.echoReqs, m.echoBytes, m.echoLastReqs, m.echoLastDur, m.echoLastEnd, m.echoLastRTT,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: ns + "active_tests", Help: "Tests in progress."},
			func() float64 { return float64(active()) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Registry is the registry the metrics are in.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

func dialectLabel(d string) string {
	if dialect.Known(d) { // the table bounds the dialect label
		return d
	}
	return "other"
}

func protocolLabel(p string) string {
	if p == result.TCP || p == result.UDP {
		return p
	}
	return "other"
}

// Started counts a test accepted.
func (m *Metrics) Started(r *result.Result) {
	m.started.WithLabelValues(protocolLabel(r.Test.Protocol), dialectLabel(r.Test.Dialect)).Inc()
}

// Outcome is "error" for a test that ended early or was refused,
// "warnings" for one with warnings, else "ok".
func Outcome(r *result.Result) string {
	switch {
	case r.Error != "":
		return "error"
	case len(r.Warnings) > 0:
		return "warnings"
	}
	return "ok"
}

// Finished counts a finished test's traffic: what this server received
// (receiver counts of its own, not a peer's report) and what it sent.
func (m *Metrics) Finished(r *result.Result, at time.Time) {
	proto, dialect := protocolLabel(r.Test.Protocol), dialectLabel(r.Test.Dialect)
	m.finished.WithLabelValues(proto, dialect, Outcome(r)).Inc()
	flows := []struct {
		s  *result.Sender
		rc *result.Receiver
	}{{r.Sender, r.Receiver}}
	if r.Reverse != nil {
		flows = append(flows, struct {
			s  *result.Sender
			rc *result.Receiver
		}{r.Reverse.Sender, r.Reverse.Receiver})
	}
	for _, f := range flows {
		if f.s != nil {
			m.sentBytes.WithLabelValues(proto, dialect).Add(float64(f.s.Bytes))
		}
		if rc := f.rc; rc != nil && rc.Source == "local" {
			m.recvBytes.WithLabelValues(proto, dialect).Add(float64(rc.Bytes))
			if proto == result.UDP {
				m.recvDgrams.WithLabelValues(dialect).Add(float64(rc.Packets))
				m.lost.WithLabelValues(dialect).Add(float64(max(rc.Lost, 0)))
				m.ooo.WithLabelValues(dialect).Add(float64(rc.OutOfOrder))
				if rc.Duplicates != nil {
					m.dups.WithLabelValues(dialect).Add(float64(*rc.Duplicates))
				}
			}
		}
	}
	m.lastEnd.WithLabelValues(proto).Set(float64(at.UnixNano()) / 1e9)
	m.lastWarn.WithLabelValues(proto).Set(float64(len(r.Warnings)))
	// A figure the last test has not got is NaN, never the one before.
	bps, lostRatio, jitter, pct := math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if rc := r.Receiver; rc != nil {
		bps = rc.BitsPerSecond
		if total := udpTotal(rc); total > 0 {
			lostRatio = float64(max(rc.Lost, 0)) / float64(total)
		}
		jitter = rc.JitterMS / 1e3
	}
	if l := r.Link; l != nil && l.TheoreticalBPS > 0 {
		pct = l.PercentOfTheoretical
	}
	m.lastBPS.WithLabelValues(proto).Set(bps)
	m.lastPct.WithLabelValues(proto).Set(pct)
	if proto == result.UDP {
		m.lastLost.WithLabelValues(proto).Set(lostRatio)
		m.lastJitter.WithLabelValues(proto).Set(jitter)
	}
}

// EchoOutcome is the outcome label of an echo session: "ok" when the
// client said bye or closed, "timeout" when it went silent, else "error".
func EchoOutcome(ss echo.Session) string {
	switch ss.End {
	case echo.EndBye, echo.EndEOF:
		return "ok"
	case echo.EndIdle:
		return "timeout"
	}
	return "error"
}

// EchoFinished counts a finished echo session: a connect probe, or a UDP
// or TCP echo test with its requests.
func (m *Metrics) EchoFinished(ss echo.Session, at time.Time) {
	if ss.Kind == echo.SessionConnect {
		m.echoConnects.Inc()
		return
	}
	kind := ss.Kind
	if kind != echo.SessionUDP && kind != echo.SessionTCP {
		kind = "other"
	}
	m.echoReqs.WithLabelValues(kind).Add(float64(ss.Requests))
	m.echoBytes.WithLabelValues(kind).Add(float64(ss.Bytes))
	m.echoLastReqs.WithLabelValues(kind).Set(float64(ss.Requests))
	m.echoLastDur.WithLabelValues(kind).Set(ss.Last.Sub(ss.First).Seconds())
	m.echoLastEnd.WithLabelValues(kind).Set(float64(at.UnixNano()) / 1e9)
	if kind == echo.SessionTCP {
		rtt := math.NaN()
		if ss.KernelRTT > 0 {
			rtt = ss.KernelRTT.Seconds()
		}
		m.echoLastRTT.WithLabelValues(kind).Set(rtt)
	}
	// Counted last: a scrape that sees the test sees its figures too (one
	// between the two saw the test and no requests, under load).
	m.echoTests.WithLabelValues(kind, EchoOutcome(ss)).Inc()
}
