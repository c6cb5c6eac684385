package client

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/session"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// min64BitLen is the shortest iperf 2 datagram that carries the whole
// 2.1 client header, whose flags ask the server for 64-bit ids: the 16-byte
// datagram header, the 24-byte header and its 36-byte extension. A shorter
// datagram cuts it, and the server reads the ids as 32 bits.
const min64BitLen = 16 + i2wire.ClientHeaderV1Len + i2wire.ClientHeaderExtLen

// idWrap is where a stream's ids outgrow what its peer reads: at is the
// number (from 1) of the first datagram whose id does not fit; why says
// why the peer reads short ids, fix how to give it 64-bit ones.
type idWrap struct {
	at       int64
	iperf3   bool
	why, fix string
}

// wrapOf says where the ids of cfg's streams to its peer outgrow what the
// peer reads, if they can: ok is false when the peer reads 64-bit ids or
// receives nothing of ours (-R: we read what it sends, and extend 32-bit
// ids past their wrap ourselves).
func wrapOf(cfg session.ClientConfig) (w idWrap, ok bool) {
	const fix2 = "the iperf2 dialect towards an iperf 2.1 or later peer, with -l of at least %d bytes"
	switch {
	case !cfg.UDP || cfg.Reverse && !cfg.Bidir:
		return w, false
	case cfg.Dialect == session.DialectIperf3:
		return idWrap{at: 1 << 32, iperf3: true, fix: "add --udp-counters-64bit"}, !cfg.UDPCounters64Bit
	case cfg.Dialect == session.DialectIperf2Legacy: // ids from 0
		return idWrap{at: 1<<31 + 1, why: "iperf 2.0.5's header cannot ask for 64-bit ids", fix: fmt.Sprintf(fix2, min64BitLen)}, true
	case cfg.Dialect == session.DialectRaw:
		return idWrap{at: 1 << 31, why: "raw datagrams carry no header to ask for 64-bit ids", fix: fmt.Sprintf(fix2, min64BitLen)}, true
	case cfg.Dialect == session.DialectIperf2 && cfg.Length < min64BitLen:
		return idWrap{at: 1 << 31, why: fmt.Sprintf("-l %d cuts the header that asks for 64-bit ids", cfg.Length),
			fix: fmt.Sprintf("-l of at least %d bytes", min64BitLen)}, true
	}
	return w, false
}

// streamDatagrams estimates how many datagrams each stream of cfg (with
// its dialect's defaults applied) sends, and at what rate (per second):
// its share of -n at -l bytes each, or of the rate over -t (and -O).
func streamDatagrams(cfg session.ClientConfig) (n, pps float64) {
	streams := float64(max(cfg.Parallel, 1))
	pps = cfg.PPS() / streams
	if cfg.Bytes > 0 && cfg.Length > 0 {
		return math.Ceil(math.Ceil(float64(cfg.Bytes)/streams) / float64(cfg.Length)), pps
	}
	return pps * (cfg.Duration + cfg.Omit).Seconds(), pps
}

// WrapNotice says, before a UDP test whose streams send more datagrams
// than their peer's ids can number (2^31 for an iperf 2 peer that reads
// 32-bit ids, 2^32 for iperf3 without --udp-counters-64bit), when the ids
// outgrow it, what that does, that wirebench extends such ids (its own
// counts stay exact) and what to do. cfg is the test as it will run (its
// dialect's defaults applied: dialect.Prepare). "" when they cannot.
func WrapNotice(cfg session.ClientConfig) string {
	w, ok := wrapOf(cfg)
	n, pps := streamDatagrams(cfg)
	if !ok || n < float64(w.at) {
		return ""
	}
	when := "from datagram " + groupDigits(w.at)
	if pps > 0 {
		when += fmt.Sprintf(" (after about %v at %s datagrams/s)", time.Duration(float64(w.at)/pps*1e9).Round(time.Second), groupDigits(int64(math.Round(pps))))
	}
	head := fmt.Sprintf("each stream of this test sends about %s datagrams: ", groupDigits(int64(n)))
	ours := "A wirebench server extends them and counts exactly, as wirebench does with what it receives."
	if w.iperf3 {
		return head + when + " its 32-bit sequence numbers wrap to 0, and an iperf3 server's loss and out-of-order counts go wrong from there. " +
			ours + " For 64-bit ones " + w.fix + ", or run shorter tests."
	}
	return head + when + " its ids pass 2^31, which an iperf 2 server reading 32-bit ids (" + w.why + ") takes for the end of the test: " +
		"its report may be wrong or early. " + ours + " For 64-bit ids use " + w.fix + ", or run shorter tests."
}

// Announce says on say, before a client test, the dialect a probe chose
// (when one did) and, when the test's ids will outgrow what its peer
// reads, the WrapNotice.
func Announce(say func(string, ...any), c probe.DialectChoice, cfg session.ClientConfig) {
	if c.Probed() {
		say("%s", c.Line())
	}
	if n := WrapNotice(cfg); n != "" {
		say("%s", n)
	}
}

// groupDigits writes n with its digits in groups of three: 2,147,483,648.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
