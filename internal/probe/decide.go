package probe

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// OpeningKind is the verdict of the first TCP exchange (tcp-opening).
type OpeningKind string

// Opening verdicts.
const (
	OpeningRefused    OpeningKind = "refused"     // no TCP listener
	OpeningClosed     OpeningKind = "closed"      // accepted, then closed without a byte
	OpeningSilent     OpeningKind = "silent"      // accepted the bytes, said nothing
	OpeningIperf3     OpeningKind = "iperf3"      // PARAM_EXCHANGE (9)
	OpeningIperf3Busy OpeningKind = "iperf3-busy" // ACCESS_DENIED (0xFF)
	OpeningIperf2Ack  OpeningKind = "iperf2-ack"  // CLIENTHDRACK
	OpeningOther      OpeningKind = "other"       // bytes of no known dialect
)

// OpeningCookie returns the cookie the opening step sends: c with its first
// character replaced by '2'. "2xxx" (0x32……) is a valid iperf3 cookie start.
// To iperf 2.1 the word has V2PEERDETECT, so 2.1.8 answers with a
// CLIENTHDRACK carrying its version, and none of VERSION1, VERSION2, EXTEND,
// so it takes the bytes as plain data, not as a header (it also has the
// KEYCHECK bit, which 2.1.8 checks only in headers: verified against iperf
// 2.1.8, which counted the 33 bytes after the flags word as a normal test).
// lwiperf, zperf and ESP-IDF take it as data with flags lacking VERSION1.
// A letter would not do: every letter has the EXTEND bit (0x40).
func OpeningCookie(c iperf3.Cookie) iperf3.Cookie {
	c[0] = '2'
	return c
}

// OpeningNeedsMore reports whether reply, read so far after the opening
// cookie, could still become a CLIENTHDRACK and so deserves more reading.
func OpeningNeedsMore(reply []byte) bool {
	if len(reply) == 0 {
		return true
	}
	if reply[0] != 0 {
		return false
	}
	if len(reply) < 12 {
		return true
	}
	n := iperf2.ClientHdrAckLen(reply)
	return n > 0 && len(reply) < n
}

// ClassifyOpening decides what the bytes that answered the opening cookie
// mean. ended is true when the peer closed (EOF or reset) rather than the
// wait timing out. version is the iperf2 version from a CLIENTHDRACK.
func ClassifyOpening(reply []byte, ended bool) (kind OpeningKind, version string) {
	switch {
	case len(reply) == 0 && ended:
		return OpeningClosed, ""
	case len(reply) == 0:
		return OpeningSilent, ""
	case len(reply) == 1 && iperf3.State(int8(reply[0])) == iperf3.ParamExchange:
		return OpeningIperf3, ""
	case len(reply) == 1 && iperf3.State(int8(reply[0])) == iperf3.AccessDenied:
		return OpeningIperf3Busy, ""
	}
	if n := iperf2.ClientHdrAckLen(reply); n > 0 && len(reply) >= 20 {
		be := binary.BigEndian
		return OpeningIperf2Ack, iperf2.VersionString(be.Uint32(reply[12:]), be.Uint32(reply[16:]))
	}
	return OpeningOther, ""
}

// AckVersion returns the iperf2 version a CLIENTHDRACK carries, and whether b
// starts with a complete CLIENTHDRACK at all.
func AckVersion(b []byte) (string, bool) {
	n := iperf2.ClientHdrAckLen(b)
	if n == 0 || len(b) < n {
		return "", false
	}
	be := binary.BigEndian
	return iperf2.VersionString(be.Uint32(b[12:]), be.Uint32(b[16:])), true
}

// UDPVerdict is what the replies to the tiny UDP test mean.
type UDPVerdict struct {
	Report   *iperf2.ServerReport // the first real report, nil when none
	Layout   iperf2.Layout
	ReplyLen int
	Echoes   int // replies that were echoes of our own datagrams
	Garbage  int // replies that were neither
}

// ClassifyUDPReplies takes the replies in arrival order and picks the first
// one that is a server report and not an echo of what we sent (ec).
func ClassifyUDPReplies(replies [][]byte, ec iperf2.EchoCheck) UDPVerdict {
	var v UDPVerdict
	for _, b := range replies {
		if ec.IsEcho(b) {
			v.Echoes++
			continue
		}
		rep, layout, err := iperf2.ParseServerReport(b)
		if err != nil {
			v.Garbage++
			continue
		}
		if v.Report == nil {
			v.Report, v.Layout, v.ReplyLen = &rep, layout, len(b)
		}
	}
	return v
}

// EchoReplyOK reports whether b is the echo service's reply to request id,
// and its format version.
func EchoReplyOK(b []byte, id uint64) (int, bool) {
	m, err := echo.ParseHeader(b)
	if err != nil || m.Kind != echo.KindReply || m.ID != id {
		return 0, false
	}
	return int(b[4]), true
}

// Summarize fills r.Dialects, r.Answered and r.Summary from the findings.
func Summarize(r *result.Probe) {
	if r.Iperf2.TCP {
		r.Iperf2.TCPNoAck = false // a later step got the ack the opening did not
	}
	r.Dialects = r.Dialects[:0]
	add := func(cond bool, d string) {
		if cond {
			r.Dialects = append(r.Dialects, d)
		}
	}
	add(r.Wirebench.EchoTCP || r.Wirebench.EchoUDP || r.Wirebench.Iperf3Ext, result.ProbeDialectWirebench)
	add(r.Iperf3.Answered, result.ProbeDialectIperf3)
	add(r.Iperf2.TCP, result.ProbeDialectIperf2TCP)
	add(!r.Iperf2.TCP && r.Iperf2.TCPNoAck, result.ProbeDialectTCPSink)
	add(r.Iperf2.UDP && r.Iperf2.UDPLayout == iperf2.LayoutModern.String(), result.ProbeDialectIperf2UDP)
	add(r.Iperf2.UDP && r.Iperf2.UDPLayout == iperf2.LayoutLegacy.String(), result.ProbeDialectIperf2UDPOld)
	r.Answered = len(r.Dialects) > 0 || r.TCP.Open
	r.Summary = summaryLine(r)
}

func summaryLine(r *result.Probe) string {
	where := fmt.Sprintf("%s port %d", r.Host, r.Port)
	if !r.Answered {
		return "nothing answered on " + where + " (TCP refused, no UDP report)"
	}
	var parts []string
	if r.Wirebench.EchoTCP || r.Wirebench.EchoUDP || r.Wirebench.Iperf3Ext {
		parts = append(parts, "wirebench server")
	}
	switch {
	case r.Iperf3.Busy:
		parts = append(parts, "iperf3 (busy)")
	case r.Iperf3.Answered:
		parts = append(parts, "iperf3")
	}
	if r.Iperf2.TCP {
		parts = append(parts, "iperf "+result.ProbeVersionText(r.Iperf2.Version)+" TCP")
	} else if r.Iperf2.TCPNoAck {
		parts = append(parts, "TCP without CLIENTHDRACK (iperf 2.0.x, lwiperf, zperf or ESP-IDF style)")
	}
	if r.Iperf2.UDP {
		parts = append(parts, "iperf2 UDP, "+r.Iperf2.UDPLayout+" report layout")
	}
	if len(parts) == 0 {
		parts = append(parts, "a TCP listener of no known dialect")
	}
	return where + ": " + strings.Join(parts, "; ")
}
