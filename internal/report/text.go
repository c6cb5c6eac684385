package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// banner is the rule iperf draws around its settings.
const banner = "------------------------------------------------------------"

// columns names one layout of the figures after Interval/Transfer/Bandwidth.
type columns int

const (
	colTCP         columns = iota // no extra columns
	colUDPSend                    // datagrams, packets/s
	colUDPRecv                    // jitter, lost/total, out-of-order, duplicates, packets/s
	colTCPEnhanced                // TCP sender with -e: retransmits, cwnd, RTT(var)
)

// Text renders one test as iperf-style lines. A client makes one Text; a
// server makes one per accepted test, all writing to the same writer.
//
// Each method writes whole lines with one Write call. A Text is not safe
// for concurrent use by itself; distinct Texts may share a writer whose
// Write is. The first write error is kept and returned by Err; later calls
// then write nothing.
type Text struct {
	w    io.Writer
	id   string
	seen map[columns]bool // column headers printed since the last Header
	err  error
	unit byte // -f letter for transfer and rate columns; 0 = adaptive
	// enhanced adds the TCP sender's kernel figures (iperf2 -e).
	enhanced bool
}

// SetEnhanced turns on iperf2's enhanced output (-e): TCP sender lines
// gain retransmits, congestion window and smoothed RTT(variation), and the
// summary the MSS in use, where the system reports them.
func (t *Text) SetEnhanced(on bool) { t.enhanced = on }

// kind picks the columns of a line, with -e's for a TCP sender.
func (t *Text) kind(udp, receiving bool) columns {
	if t.enhanced && !udp && !receiving {
		return colTCPEnhanced
	}
	return kindOf(udp, receiving)
}

// tcpColumns writes the -e columns of a TCP sender: n/a where the system
// gave no figures.
func tcpColumns(b *strings.Builder, f *result.TCPInfo) {
	if f == nil {
		fmt.Fprintf(b, "  %5s  %9s  %16s", "n/a", "n/a", "n/a")
		return
	}
	fmt.Fprintf(b, "  %5d  %9s  %16s", f.Retransmits, strconv.FormatInt(f.CwndBytes/1024, 10)+"K",
		fmt.Sprintf("%d(%d) us", f.RTTMicros, f.RTTVarMicros))
}

// SetFormat chooses the unit of the transfer and rate columns with an
// iperf -f letter (units.Formats); 0 or 'a' is adaptive.
func (t *Text) SetFormat(f byte) { t.unit = f }

// NewText returns a Text writing to w. id is the test's line id, as
// printed in brackets: "1" for a client, the server's running test number
// for a server.
func NewText(w io.Writer, id string) *Text {
	return &Text{w: w, id: id, seen: map[columns]bool{}}
}

// Err returns the first error writing to the writer, if any.
func (t *Text) Err() error { return t.err }

func (t *Text) write(b *strings.Builder) {
	if t.err != nil || b.Len() == 0 {
		return
	}
	if _, err := io.WriteString(t.w, b.String()); err != nil {
		t.err = fmt.Errorf("writing text report: %w", err)
	}
}

// Listening prints the banner a server shows once at start: the port it
// listens on for both TCP and UDP, and the address it is bound to when
// bind is not empty.
func (t *Text) Listening(bind string, port int) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nServer listening on TCP and UDP port %d", banner, port)
	if bind != "" {
		fmt.Fprintf(&b, ", bound to %s", bind)
	}
	fmt.Fprintf(&b, "\n%s\n", banner)
	t.write(&b)
}

// Header prints what a test is about to do. For role "client" that is the
// iperf banner (peer, protocol and port; datagram size and rate or buffer
// size; dialect, streams, amount and mode) followed by the connected line
// when local or peer is known. For role "server" it is the one line per
// accepted test: "[  3] local 127.0.0.1 port 5001 connected with 127.0.0.1
// port 45018 (udp, iperf2, peer 2.1.8)". local and peer are "host:port".
// Header also starts a new table: column headers print again before the
// next interval lines.
func (t *Text) Header(test result.Test, role, local, peer string) {
	t.seen = map[columns]bool{}
	var b strings.Builder
	if role == "server" {
		fmt.Fprintf(&b, "%s %s (%s)\n", idText(t.id), connected(local, peer), serverTags(test))
		t.write(&b)
		return
	}
	proto := strings.ToUpper(test.Protocol)
	fmt.Fprintf(&b, "%s\nClient connecting to %s, %s port %d\n", banner, test.Host, proto, test.Port)
	b.WriteString(sizeLine(test) + "\n")
	b.WriteString(settingsLine(test) + "\n")
	b.WriteString(banner + "\n")
	if local != "" || peer != "" {
		fmt.Fprintf(&b, "%s %s\n", idText(t.id), connected(local, peer))
	}
	t.write(&b)
}

// Connected prints the client's connected line once the connection
// exists: "[  1] local A port 1 connected with B port 2".
func (t *Text) Connected(local, peer string) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", idText(t.id), connected(local, peer))
	t.write(&b)
}

// connected says "local A port 1 connected with B port 2", leaving out
// the side that is not known.
func connected(local, peer string) string {
	switch {
	case local == "":
		return "connected with " + orNA(hostPort(peer))
	case peer == "":
		return "local " + hostPort(local)
	}
	return "local " + hostPort(local) + " connected with " + hostPort(peer)
}

// serverTags lists protocol, dialect, mode and peer version for the
// server's connected line.
func serverTags(test result.Test) string {
	tags := []string{test.Protocol}
	for _, s := range []string{test.Dialect, test.Mode} {
		if s != "" {
			tags = append(tags, s)
		}
	}
	if test.PeerVersion != "" {
		tags = append(tags, "peer "+test.PeerVersion)
	}
	return strings.Join(tags, ", ")
}

// sizeLine says what each write carries and, for UDP, at what rate.
func sizeLine(test result.Test) string {
	if test.Protocol != result.UDP {
		if test.Length > 0 {
			return fmt.Sprintf("Writing %d byte buffers", test.Length)
		}
		return "Writing default-size buffers"
	}
	s := "Sending datagrams"
	if test.Length > 0 {
		s = fmt.Sprintf("Sending %d byte datagrams", test.Length)
	}
	bps, pps := test.RateBPS, test.RatePPS
	if pps <= 0 && bps > 0 && test.Length > 0 {
		pps = bps / (8 * float64(test.Length))
	}
	if bps <= 0 && pps > 0 && test.Length > 0 {
		bps = pps * 8 * float64(test.Length)
	}
	switch {
	case !finite(test.RatePPS) || !finite(test.RateBPS) || test.RatePPS < 0 || test.RateBPS < 0:
		s += ", rate " + na
	case bps > 0:
		s += ", rate " + units.FormatBits(bps)
		if finite(pps) && pps > 0 {
			s += fmt.Sprintf(" (%.0f pps)", pps)
		}
	default:
		s += ", unpaced"
	}
	return s
}

// settingsLine lists dialect, streams, amount and mode.
func settingsLine(test result.Test) string {
	var parts []string
	if test.Dialect != "" {
		parts = append(parts, "Dialect "+test.Dialect)
	}
	n := max(test.Streams, 1)
	streams := fmt.Sprintf("%d streams", n)
	if n == 1 {
		streams = "1 stream"
	}
	if test.Mode == "bidir" {
		streams += " each way"
	}
	parts = append(parts, streams)
	switch {
	case test.Bytes > 0:
		parts = append(parts, "amount "+bytesText(test.Bytes, 0))
	case test.Duration > 0 && finite(test.Duration):
		parts = append(parts, "time "+strconv.FormatFloat(test.Duration, 'f', -1, 64)+" s")
	}
	if test.Mode != "" {
		parts = append(parts, "mode "+test.Mode)
	}
	s := strings.Join(parts, ", ")
	return strings.ToUpper(s[:1]) + s[1:]
}

// kindOf picks the columns of interval lines.
func kindOf(udp, receiving bool) columns {
	switch {
	case !udp:
		return colTCP
	case receiving:
		return colUDPRecv
	default:
		return colUDPSend
	}
}

// columnHeader writes the "[ ID] Interval ..." line for k unless it was
// already printed in this table.
func (t *Text) columnHeader(b *strings.Builder, k columns) {
	if t.seen[k] {
		return
	}
	t.seen[k] = true
	fmt.Fprintf(b, "[ ID] %-15s  %11s  %14s", "Interval", "Transfer", "Bandwidth")
	switch k {
	case colUDPSend:
		fmt.Fprintf(b, "  %9s  %11s", "Datagrams", "PPS")
	case colUDPRecv:
		fmt.Fprintf(b, "  %11s  %20s  %12s  %10s  %11s", "Jitter", "Lost/Total (loss)", "Out-of-order", "Duplicates", "PPS")
	case colTCPEnhanced:
		fmt.Fprintf(b, "  %5s  %9s  %16s", "Retr", "Cwnd", "RTT(var)")
	}
	b.WriteString("\n")
}

// common writes the id, interval, transfer and bandwidth columns.
func (t *Text) common(b *strings.Builder, id string, start, end float64, bytes int64, bps float64) {
	fmt.Fprintf(b, "%s %-11s sec  %11s  %14s", idText(id), spanText(start, end), bytesText(bytes, t.unit), bitsText(bps, end-start, t.unit))
}

// Interval prints one interval line, preceded by the column header the
// first time lines of its kind appear. id is the line id ("1", "SUM");
// udp and receiving choose the columns: UDP senders show datagrams and
// packets/s, UDP receivers jitter, lost/total (loss %), out-of-order and
// packets/s. An interval of a two-flow test is tagged with its flow.
func (t *Text) Interval(id string, in result.Interval, udp bool, receiving bool) {
	var b strings.Builder
	k := t.kind(udp, receiving)
	t.columnHeader(&b, k)
	t.common(&b, id, in.Start, in.End, in.Bytes, in.BitsPerSecond)
	secs := in.End - in.Start
	switch k {
	case colTCPEnhanced:
		tcpColumns(&b, in.TCP)
	case colUDPSend:
		fmt.Fprintf(&b, "  %9d  %11s", in.Packets, ppsText(0, in.Packets, secs))
	case colUDPRecv:
		total := in.Packets + max(in.Lost, 0)
		fmt.Fprintf(&b, "  %11s  %20s  %12d  %10d  %11s", jitterText(in.JitterMS), lossText(in.Lost, total), in.OutOfOrder, in.Duplicates, ppsText(0, in.Packets, secs))
	}
	if in.Flow != "" {
		b.WriteString("  " + in.Flow)
	}
	if in.Omitted {
		b.WriteString("  (omitted)")
	}
	b.WriteString("\n")
	t.write(&b)
}
