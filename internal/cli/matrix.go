package cli

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
)

// matrixFlags are the matrix command's flags as typed.
type matrixFlags struct {
	port      int
	seconds   float64
	interval  float64
	rate      string
	length    string
	dialect   string
	bidir     bool
	proto     string
	json, csv bool
	saving    saveFlags
	dut       dutFlags
	linkFlags
	latencyFlags
}

func newMatrixCmd(e *env) *cobra.Command {
	f := &matrixFlags{}
	cmd := &cobra.Command{
		Use:   "matrix HOST",
		Short: "Run TCP and UDP, upload and download, against one peer and print the table",
		Long: `Run four tests against HOST — TCP and UDP, upload (we send, the peer receives) and
download (the peer sends, we receive) — one after another, and print them as one
table: Mbit/s, loss, jitter and, with --medium, % of what the medium allows.

How the peer is asked to send depends on its dialect:
  iperf2 (wirebench server, iperf 2.1)  -R on our connection
  iperf2-legacy (iperf 2.0.5, lwiperf)  -r: the peer connects back after our test
  iperf3 (-p 5201)                      -R
  raw (zperf, ESP-IDF)                  cannot: the download cells say so
A cell the peer cannot do is marked unsupported with the reason, never faked.
Upload figures are what the peer received (its report); where the peer reports
nothing (iperf 2 servers for TCP) the figure is what we sent, and the cell says so.

UDP cells send at -b (default: the line rate of --medium, else iperf's 1 Mbit/s,
with a warning). --bidir adds a row per protocol with both directions at once.
--latency probes the RTT idle and under each cell's load (udp needs a wirebench
server; icmp works against any peer, as root).
JSON (--json): one document, kind "matrix", each cell with its full result (docs/matrix.md).`,
		Example: `  wirebench matrix 192.0.2.1 -b 100M --medium eth100
  wirebench matrix 192.0.2.1 --dialect iperf2-legacy -b 100M -t 10
  wirebench matrix 192.0.2.1 -p 5201 --bidir --json > matrix.json
  wirebench matrix 192.0.2.1 -b 100M --latency icmp --csv`,
		Args: exactArgs(1, "one HOST"),
		RunE: func(cmd *cobra.Command, args []string) error { return runMatrix(e, cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.port, "port", "p", session.DefaultPort, "peer port (5201: iperf3 dialect unless --dialect)")
	fl.Float64VarP(&f.seconds, "time", "t", 10, "seconds per cell")
	fl.Float64VarP(&f.interval, "interval", "i", 1, "seconds between the interval samples kept in each cell's result (0 = none)")
	fl.StringVarP(&f.rate, "bandwidth", "b", "", "UDP send `RATE`: bit/s with k/M/G or packets/s (default the --medium line rate, else 1M)")
	fl.StringVarP(&f.length, "len", "l", "", "UDP payload / TCP write size in `BYTES` (defaults as the client's)")
	fl.StringVar(&f.dialect, "dialect", "", "wire dialect `NAME`: iperf2, iperf2-legacy, raw or iperf3 (default iperf2; iperf3 when -p 5201)")
	fl.BoolVar(&f.bidir, "bidir", false, "add a row per protocol with both directions at once (iperf3 --bidir, iperf2 --full-duplex / -d)")
	fl.StringVar(&f.proto, "proto", "both", "`PROTO`s to run: tcp, udp or both (iperf -s answers TCP only, iperf -s -u UDP only)")
	fl.BoolVar(&f.json, "json", false, "print one JSON document, kind \"matrix\" (docs/matrix.md)")
	fl.BoolVar(&f.csv, "csv", false, "print the cells as CSV")
	f.linkFlags.register(cmd)
	f.latencyFlags.register(cmd)
	f.saving.register(cmd)
	f.dut.registerMatrix(cmd)
	return cmd
}

// config turns the flags into a matrix config, with usage errors for
// anything malformed.
func (f *matrixFlags) config(cmd *cobra.Command, host string, link *linkPlacer) (matrix.Config, []string, error) {
	base := session.ClientConfig{Host: host, Port: f.port, Dialect: f.dialect, Parallel: 1}
	if !cmd.Flags().Changed("dialect") && f.port == session.DefaultIperf3Port {
		base.Dialect = session.DialectIperf3
	}
	var notes []string
	if f.seconds <= 0 || math.IsInf(f.seconds, 0) || math.IsNaN(f.seconds) || f.seconds > 86400 {
		return matrix.Config{}, nil, usagef("invalid duration -t %v: want seconds > 0", f.seconds)
	}
	base.Duration = time.Duration(f.seconds * float64(time.Second))
	var err error
	if base.Interval, err = intervalSeconds(f.interval); err != nil {
		return matrix.Config{}, nil, err
	}
	switch {
	case f.rate != "":
		r, err := units.ParseRate(f.rate)
		if err != nil {
			return matrix.Config{}, nil, usageError{err}
		}
		base.Rate = r
	case link != nil:
		base.Rate = units.Rate{Value: link.m.BitRate}
	default:
		notes = append(notes, "the UDP cells ran at iperf's default 1 Mbit/s: pass -b (or --medium) to load the link")
	}
	if f.length != "" {
		n, err := units.ParseSize(f.length)
		if err != nil {
			return matrix.Config{}, nil, usageError{err}
		}
		base.Length = int(min(n, math.MaxInt32))
	}
	cfg := matrix.Config{Base: base, Bidir: f.bidir, Pause: matrix.DefaultPause}
	switch f.proto {
	case "both":
	case result.TCP, result.UDP:
		cfg.Protocols = []string{f.proto}
	default:
		return matrix.Config{}, nil, usagef("invalid --proto %q: want tcp, udp or both", f.proto)
	}
	if link != nil {
		cfg.Place = func(r *result.Result, goodput float64) (float64, bool) {
			link.apply(r)
			return link.percent(r, goodput)
		}
	}
	return cfg, notes, nil
}

func runMatrix(e *env, cmd *cobra.Command, host string, f *matrixFlags) error {
	format, err := pickFormat(f.json, f.csv)
	if err != nil {
		return err
	}
	link, err := f.linkFlags.resolve()
	if err != nil {
		return err
	}
	cfg, notes, err := f.config(cmd, host, link)
	if err != nil {
		return err
	}
	lat, err := f.latencyFlags.probe(f.port)
	if err != nil {
		return err
	}
	if err := f.saving.check(); err != nil {
		return err
	}
	defer f.saving.close()
	var sessions matrix.Session = matrix.ClientSessions{Latency: lat}
	if f.dut.enabled() {
		dm, err := f.dut.openMatrixDUT(e, cmd, &cfg, matrix.ClientSessions{Latency: lat})
		if err != nil {
			return err
		}
		defer dm.close(e)
		sessions = dm
	}
	progress := newProgress(e.stderr)
	cfg.OnCell, cfg.OnInterval = progress.cell, progress.interval
	m, err := matrix.Run(e.ctx, sessions, cfg)
	progress.done()
	if err != nil {
		return usageOrRun(err)
	}
	m.Warnings = append(m.Warnings, notes...)
	if link != nil {
		m.Medium = link.m.Name
	}
	id, w := f.saving.save(e, matrix.Kind, net.JoinHostPort(m.Host, strconv.Itoa(m.Port)), matrixSummary(m), m.StartedAt, m)
	if w != "" {
		m.Warnings = append(m.Warnings, w)
	}
	defer f.saving.announce(e, id, format)
	m.RunID = id
	switch format {
	case formatJSON:
		err = writeJSONDoc(e.stdout, m)
	case formatCSV:
		err = writeMatrixCSV(e.stdout, m)
	default:
		if err = writeMatrixText(e.stdout, m); err == nil && f.dut.enabled() {
			err = writeMatrixDevice(e, m)
		}
	}
	if err != nil {
		return err
	}
	if m.Error != "" {
		return fmt.Errorf("matrix: %s", m.Error)
	}
	for _, c := range m.Cells {
		if c.Status == matrix.StatusFailed {
			return fmt.Errorf("matrix: the %s cell failed: %s", c.Name(), c.Reason)
		}
	}
	return nil
}

// matrixProgress prints the progress line on stderr: redrawn in place on
// a terminal, one line per cell otherwise.
type matrixProgress struct {
	mu   sync.Mutex
	w    io.Writer
	tty  bool
	head string
	open bool
}

func newProgress(w io.Writer) *matrixProgress {
	p := &matrixProgress{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *matrixProgress) cell(n, total int, c matrix.Cell) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.head = fmt.Sprintf("matrix [%d/%d] %s", n, total, c.Name())
	line := p.head
	if c.Method != "" {
		line += " (" + c.Method + ")"
	}
	if c.Status == matrix.StatusUnsupported {
		line += ": unsupported"
	}
	p.print(line)
}

func (p *matrixProgress) interval(_ matrix.Cell, in result.Interval) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		return // a log gets one line per cell, not one per second
	}
	p.print(fmt.Sprintf("%s: %.0f s, %.2f Mbit/s", p.head, in.End, in.BitsPerSecond/1e6))
}

func (p *matrixProgress) print(line string) {
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.open = true
		return
	}
	fmt.Fprintln(p.w, line)
}

func (p *matrixProgress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// writeMatrixText prints the matrix: one line per cell, then the grid of
// direction × protocol, then the warnings.
func writeMatrixText(w io.Writer, m *matrix.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "matrix: %s port %d, %s dialect, %s s per cell", m.Host, m.Port, m.Dialect, strconv.FormatFloat(m.Duration, 'f', -1, 64))
	switch {
	case m.RatePPS > 0:
		fmt.Fprintf(&b, ", UDP at %.0f pps", m.RatePPS)
	case m.RateBPS > 0:
		fmt.Fprintf(&b, ", UDP at %s", units.FormatBits(m.RateBPS))
	}
	if m.Medium != "" {
		fmt.Fprintf(&b, ", medium %s", m.Medium)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-8s %-18s %-14s %12s %9s %11s %8s  %s\n", "proto", "direction", "method", "Mbit/s", "loss", "jitter", "% line", "status")
	for _, c := range m.Cells {
		dir := c.Direction
		if c.Simultaneous {
			dir += " (bidir)"
		}
		status := c.Status
		if c.Basis == "sender" {
			status += " (sender's count)"
		}
		if c.Reason != "" {
			status += ": " + c.Reason
		}
		fmt.Fprintf(&b, "%-8s %-18s %-14s %12s %9s %11s %8s  %s\n", strings.ToUpper(c.Protocol), dir, c.Method,
			optFmt(c.BitsPerSecond, 1e-6, "%.2f"), optFmt(c.LossPercent, 1, "%.2f %%"), optFmt(c.JitterMS, 1, "%.3f ms"),
			optFmt(c.PercentOfLine, 1, "%.1f"), status)
	}
	b.WriteString("\n")
	writeGrid(&b, m)
	for _, wng := range m.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wng)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeGrid prints the TCP/UDP × upload/download summary: a row per direction, a column per
// protocol, Mbit/s in each.
func writeGrid(b *strings.Builder, m *matrix.Result) {
	var protos []string
	type rowKey struct {
		dir  string
		both bool
	}
	var rows []rowKey
	cells := map[rowKey]map[string]matrix.Cell{}
	for _, c := range m.Cells {
		k := rowKey{c.Direction, c.Simultaneous}
		if cells[k] == nil {
			cells[k] = map[string]matrix.Cell{}
			rows = append(rows, k)
		}
		if !slices.Contains(protos, c.Protocol) {
			protos = append(protos, c.Protocol)
		}
		cells[k][c.Protocol] = c
	}
	fmt.Fprintf(b, "%-32s", "direction")
	for _, p := range protos {
		fmt.Fprintf(b, " %14s", strings.ToUpper(p)+" (Mbit/s)")
	}
	b.WriteString("\n")
	for _, k := range rows {
		label := map[string]string{matrix.Upload: "upload (we send, peer receives)", matrix.Download: "download (peer sends, we receive)"}[k.dir]
		if k.both {
			label = k.dir + ", both at once"
		}
		fmt.Fprintf(b, "%-32s", label)
		for _, p := range protos {
			c, ok := cells[k][p]
			v := "-"
			switch {
			case !ok:
			case c.BitsPerSecond != nil:
				v = fmt.Sprintf("%.2f", *c.BitsPerSecond/1e6)
				if c.Basis == "sender" {
					v += "*"
				}
			default:
				v = c.Status
			}
			fmt.Fprintf(b, " %14s", v)
		}
		b.WriteString("\n")
	}
	for _, c := range m.Cells {
		if c.Basis == "sender" {
			b.WriteString("* what was sent: the peer does not report what it received\n")
			break
		}
	}
}

// optFmt formats an optional figure scaled by k, or "-" when absent.
func optFmt(v *float64, k float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v*k)
}

// writeMatrixCSV prints one CSV row per cell.
func writeMatrixCSV(w io.Writer, m *matrix.Result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"protocol", "direction", "simultaneous", "method", "bits_per_second", "loss_percent", "jitter_ms",
		"percent_of_line", "basis", "status", "reason"})
	num := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	for _, c := range m.Cells {
		_ = cw.Write([]string{c.Protocol, c.Direction, strconv.FormatBool(c.Simultaneous), c.Method, num(c.BitsPerSecond),
			num(c.LossPercent), num(c.JitterMS), num(c.PercentOfLine), c.Basis, c.Status, c.Reason})
	}
	cw.Flush()
	return cw.Error()
}

// matrixSummary is the one line history shows for a matrix: each cell's
// figure.
func matrixSummary(m *matrix.Result) string {
	var b strings.Builder
	b.WriteString("matrix")
	for i, c := range m.Cells {
		sep := ", "
		if i == 0 {
			sep = " "
		}
		b.WriteString(sep + c.Name() + " ")
		if c.Status != matrix.StatusOK {
			b.WriteString(string(c.Status))
			continue
		}
		if c.BitsPerSecond != nil {
			b.WriteString(fmt.Sprintf("%.2f Mbit/s", *c.BitsPerSecond/1e6))
		}
	}
	return b.String()
}
