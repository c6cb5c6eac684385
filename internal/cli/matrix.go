package cli

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/report"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/calc"
	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// matrixFlags are the matrix command's flags as typed.
type matrixFlags struct {
	matrix.Options
	interval  float64
	dialect   string
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
Without --dialect on a port other than 5001 and 5201 (or with --dialect auto) the
peer is probed first with one short TCP exchange: iperf3 if an iperf3 server answers,
else iperf2; device dialects are never guessed (docs/probe.md).
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
	fl.IntVarP(&f.Port, "port", "p", session.DefaultPort, "peer port (5201: iperf3 dialect unless --dialect; others: the dialect is probed)")
	fl.Float64VarP(&f.Seconds, "time", "t", 10, "seconds per cell")
	fl.Float64VarP(&f.interval, "interval", "i", 1, "seconds between the interval samples kept in each cell's result (0 = none)")
	fl.StringVarP(&f.Rate, "bandwidth", "b", "", "UDP send `RATE`: bit/s with k/M/G or packets/s (default the --medium line rate, else 1M)")
	fl.StringVarP(&f.Length, "len", "l", "", "UDP payload / TCP write size in `BYTES` (defaults as the client's)")
	fl.StringVar(&f.dialect, "dialect", "", dialectFlagHelp)
	fl.BoolVar(&f.Bidir, "bidir", false, "add a row per protocol with both directions at once (iperf3 --bidir, iperf2 --full-duplex / -d)")
	fl.StringVar(&f.Proto, "proto", "both", "`PROTO`s to run: tcp, udp or both (iperf -s answers TCP only, iperf -s -u UDP only)")
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
func (f *matrixFlags) config(cmd *cobra.Command, host string, link *calc.Placer) (matrix.Config, []string, error) {
	if f.dialect != "" {
		if err := enumFlag("--dialect", f.dialect, dialectNames()...); err != nil {
			return matrix.Config{}, nil, err
		}
	}
	if err := f.dut.checkShell(); err != nil {
		return matrix.Config{}, nil, err
	}
	o := f.Options
	o.DialectGiven = cmd.Flags().Changed("dialect")
	if f.dialect != probe.DialectAuto {
		o.Dialect = f.dialect // auto: chosen by runMatrix, once the flags are checked
	}
	var err error
	if o.Interval, err = intervalSeconds(f.interval); err != nil {
		return matrix.Config{}, nil, err
	}
	cfg, notes, err := o.Config(host, link)
	if err != nil {
		return cfg, nil, usageError{err}
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
	lat, err := f.latencyFlags.probe(f.Port)
	if err != nil {
		return err
	}
	if err := f.saving.check(); err != nil {
		return err
	}
	defer f.saving.close()
	choice, err := f.chooseDialect(e, cmd, host, cfg.Base, format)
	if err != nil {
		return err
	}
	if choice.Dialect != "" {
		cfg.Base.Dialect = choice.Dialect
	}
	cfg.PeerAnswered = choice.Answered
	var sessions matrix.Session = matrix.ClientSessions{Latency: lat}
	if f.dut.enabled() {
		dm, err := f.dut.openMatrixDUT(e, cmd, &cfg, matrix.ClientSessions{Latency: lat})
		if err != nil {
			return err
		}
		defer dm.close(e)
		sessions = dm
	}
	prog := report.NewProgress(e.stderr)
	mp := matrix.NewProgress(prog.Line, prog.Live())
	cfg.OnStart, cfg.OnCell, cfg.OnInterval = mp.Start, mp.Cell, mp.Interval
	m, err := matrix.Run(e.ctx, sessions, cfg)
	prog.Done()
	if err != nil {
		return usageOrRun(err)
	}
	m.Warnings = append(m.Warnings, notes...)
	m.DialectChosenBy, m.DialectReason = choice.By, choice.Reason
	if choice.By == probe.ChosenByProbe && m.Dialect == session.DialectIperf2 {
		for i, w := range m.Warnings {
			// The peer acked as iperf 2 when probed: not an iperf3 server.
			m.Warnings[i] = strings.Replace(w, session.Iperf3Hint, "the peer acked as iperf 2 when probed, so it is not "+
				"an iperf3 server: iperf 2.1.8's server sometimes drops a test that follows another", 1)
		}
	}
	if f.dut.enabled() && !cmd.Flags().Changed("dialect") && cfg.Base.Dialect != choice.Dialect {
		m.DialectChosenBy = probe.ChosenByDevice
	}
	if link != nil {
		m.Medium = link.Medium.Name
	}
	id, w := f.saving.save(e, result.KindMatrix, net.JoinHostPort(m.Host, strconv.Itoa(m.Port)), matrix.Summary(m), m.StartedAt, m)
	if w != "" {
		m.Warnings = append(m.Warnings, w)
	}
	defer f.saving.announce(e, id, format)
	m.RunID = id
	switch format {
	case formatJSON:
		err = writeJSONDoc(e.stdout, m)
	case formatCSV:
		err = report.WriteMatrixCSV(e.stdout, m)
	default:
		err = writeMatrixRun(e.stdout, m)
	}
	if err != nil {
		return err
	}
	return matrix.Failed(m)
}

// chooseDialect settles the matrix's dialect (see chooseDialect); with
// --dut the device's server decides unless --dialect names one.
func (f *matrixFlags) chooseDialect(e *env, cmd *cobra.Command, host string, base session.ClientConfig, format outputFormat) (probe.DialectChoice, error) {
	given := cmd.Flags().Changed("dialect")
	if !f.dut.enabled() {
		if probe.WillProbe(f.Port, f.dialect, given) {
			if err := probe.Precheck(matrix.PrepCheck(base)); err != nil {
				return probe.DialectChoice{}, usageOrRun(err)
			}
		}
		c := probe.ChooseDialect(e.ctx, host, f.Port, f.dialect, given, e.logf)
		base.Dialect = c.Dialect
		if e.ctx.Err() != nil {
			return c, fmt.Errorf("interrupted while probing %s for its dialect: no cell ran", host)
		}
		if _, err := dialect.Prepare(matrix.PrepCheck(base)); err != nil {
			return c, c.Explain(usageOrRun(err))
		}
		if format == formatText {
			announceDialect(e, c)
		}
		return c, nil
	}
	switch {
	case given && f.dialect == probe.DialectAuto:
		return probe.DialectChoice{}, usagef("--dialect auto cannot be combined with --dut: the device's shell says which dialect its server needs")
	case given:
		return probe.DialectChoice{Dialect: f.dialect, By: probe.ChosenByFlag}, nil
	case f.Port == session.DefaultIperf3Port:
		return probe.DialectChoice{Dialect: session.DialectIperf3, By: probe.ChosenByPort}, nil
	}
	return probe.DialectChoice{}, nil
}
