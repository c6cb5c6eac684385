package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// CSVColumns returns the names of the CSV columns, in order. The meaning
// of each is documented in docs/json.md ("CSV"); columns are only ever
// added at the end.
func CSVColumns() []string {
	return []string{
		"started_at", "role", "protocol", "direction", "dialect", "host", "port", "peer",
		"flow", "stream", "kind", "start_s", "end_s", "bytes", "bits_per_second",
		"packets", "packets_per_second", "jitter_ms", "lost", "total", "loss_percent",
		"out_of_order", "duplicates", "source", "warnings", "error",
	}
}

// WriteCSVHeader writes the header row naming the columns.
func WriteCSVHeader(w io.Writer) error {
	return writeRows(w, [][]string{CSVColumns()})
}

// WriteCSV writes r as rows: one per interval (kind "interval"), then
// summary rows (kind "sender" and "receiver") for the whole test, for each
// stream of a multi-stream test and for the reverse flow. Figures that do
// not apply or cannot be computed (UDP columns of a TCP test, a rate over
// zero seconds, a loss percentage of zero datagrams, NaN) are empty cells,
// never 0. Warnings and the error are repeated on every summary row.
func WriteCSV(w io.Writer, r *result.Result) error {
	if r == nil {
		return errors.New("writing CSV result: no result")
	}
	return writeRows(w, csvRows(r))
}

func writeRows(w io.Writer, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		return fmt.Errorf("writing CSV result: %w", err)
	}
	return nil
}

// csvTest holds the cells every row of one test shares.
type csvTest struct {
	r      *result.Result
	prefix []string
	udp    bool
}

func csvRows(r *result.Result) [][]string {
	started := ""
	if !r.StartedAt.IsZero() {
		started = r.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	ct := csvTest{r: r, udp: r.Test.Protocol == result.UDP, prefix: []string{
		started, r.Role, r.Test.Protocol, r.Test.Direction, r.Test.Dialect, r.Test.Host,
		strconv.Itoa(r.Test.Port), r.Test.Peer,
	}}
	var rows [][]string
	reverseInMain := false
	for _, in := range r.Intervals {
		rows = append(rows, ct.interval(in))
		reverseInMain = reverseInMain || in.Flow == "reverse"
	}
	if r.Reverse != nil && !reverseInMain {
		for _, in := range r.Reverse.Intervals {
			if in.Flow == "" {
				in.Flow = "reverse"
			}
			rows = append(rows, ct.interval(in))
		}
	}
	fwd := ""
	if r.Reverse != nil {
		fwd = "forward"
	}
	rows = append(rows, ct.sides(fwd, r.Sender, r.Receiver, r.Streams)...)
	if r.Reverse != nil {
		rows = append(rows, ct.sides("reverse", r.Reverse.Sender, r.Reverse.Receiver, nil)...)
	}
	return rows
}

// receiving reports whether intervals of flow were counted by a receiver
// on this side (so loss and jitter mean something). Both directions at
// once cannot be told apart, and are shown whole.
func (ct csvTest) receiving(flow string) bool {
	rev := flow == "reverse"
	switch ct.r.Test.Direction {
	case result.DirSend:
		return rev
	case result.DirReceive:
		return !rev
	}
	return true
}

func (ct csvTest) row(flow, stream, kind string, start, end float64, bytes int64, bps float64) []string {
	row := append(append([]string{}, ct.prefix...), flow, stream, kind,
		floatCell(start), floatCell(end), strconv.FormatInt(bytes, 10), rateCell(bps, end-start))
	return append(row, make([]string, len(CSVColumns())-len(row))...)
}

// Column indexes of the cells filled per kind of row.
const (
	cPackets = 15 + iota
	cPPS
	cJitter
	cLost
	cTotal
	cLoss
	cOOO
	cDup
	cSource
	cWarnings
	cError
)

func (ct csvTest) interval(in result.Interval) []string {
	row := ct.row(in.Flow, "sum", "interval", in.Start, in.End, in.Bytes, in.BitsPerSecond)
	if !ct.udp {
		return row
	}
	row[cPackets] = strconv.FormatInt(in.Packets, 10)
	row[cPPS] = ppsCell(0, in.Packets, in.End-in.Start)
	if ct.receiving(in.Flow) {
		row[cJitter] = floatCell(in.JitterMS)
		row[cLost] = strconv.FormatInt(in.Lost, 10)
		total := in.Packets + max(in.Lost, 0)
		row[cTotal] = strconv.FormatInt(total, 10)
		row[cLoss] = lossCell(in.Lost, total)
		row[cOOO] = strconv.FormatInt(in.OutOfOrder, 10)
		row[cDup] = strconv.FormatInt(in.Duplicates, 10)
	}
	return row
}

func (ct csvTest) sides(flow string, s *result.Sender, rcv *result.Receiver, streams []result.Stream) [][]string {
	var rows [][]string
	if len(streams) > 1 {
		for _, st := range streams {
			id := strconv.Itoa(st.ID)
			if st.Sender != nil {
				rows = append(rows, ct.sender(flow, id, st.Sender))
			}
			if st.Receiver != nil {
				rows = append(rows, ct.receiver(flow, id, st.Receiver))
			}
		}
	}
	if s != nil {
		rows = append(rows, ct.sender(flow, "sum", s))
	}
	if rcv != nil {
		rows = append(rows, ct.receiver(flow, "sum", rcv))
	}
	return rows
}

func (ct csvTest) summary(row []string) []string {
	row[cWarnings] = strings.Join(ct.r.Warnings, " | ")
	row[cError] = ct.r.Error
	return row
}

func (ct csvTest) sender(flow, stream string, s *result.Sender) []string {
	row := ct.row(flow, stream, "sender", 0, s.Seconds, s.Bytes, s.BitsPerSecond)
	if ct.udp {
		row[cPackets] = strconv.FormatInt(s.Packets, 10)
		row[cPPS] = ppsCell(s.PacketsPerSecond, s.Packets, s.Seconds)
	}
	return ct.summary(row)
}

func (ct csvTest) receiver(flow, stream string, r *result.Receiver) []string {
	row := ct.row(flow, stream, "receiver", 0, r.Seconds, r.Bytes, r.BitsPerSecond)
	row[cSource] = r.Source
	if ct.udp {
		total := r.Total
		if total <= 0 {
			total = r.Packets + max(r.Lost, 0)
		}
		row[cPackets] = strconv.FormatInt(r.Packets, 10)
		row[cPPS] = ppsCell(r.PacketsPerSecond, r.Packets, r.Seconds)
		row[cJitter] = floatCell(r.JitterMS)
		row[cLost] = strconv.FormatInt(r.Lost, 10)
		row[cTotal] = strconv.FormatInt(total, 10)
		row[cLoss] = lossCell(r.Lost, total)
		row[cOOO] = strconv.FormatInt(r.OutOfOrder, 10)
		if r.Duplicates != nil {
			row[cDup] = strconv.FormatInt(*r.Duplicates, 10)
		}
	}
	return ct.summary(row)
}

// floatCell formats a finite number in the shortest exact form; NaN and
// infinities are empty cells.
func floatCell(v float64) string {
	if !finite(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// rateCell is a rate measured over secs: empty when secs is not positive.
func rateCell(v, secs float64) string {
	if !(secs > 0) || !finite(secs) || v < 0 {
		return ""
	}
	return floatCell(v)
}

func ppsCell(given float64, n int64, secs float64) string {
	if finite(given) && given > 0 {
		return floatCell(given)
	}
	if r, ok := rateOf(n, secs); ok {
		return floatCell(r)
	}
	return ""
}

// lossCell is 100·lost/total, with a negative lost counted as 0; empty
// when total is 0.
func lossCell(lost, total int64) string {
	if total <= 0 {
		return ""
	}
	return floatCell(100 * float64(max(lost, 0)) / float64(total))
}
