package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// latencyCmdFlags are the latency command's flags as typed.
type latencyCmdFlags struct {
	echo.Options
	json   bool
	saving saveFlags
}

func newLatencyCmd(e *env) *cobra.Command {
	f := &latencyCmdFlags{}
	cmd := &cobra.Command{
		Use:   "latency HOST",
		Short: "Measure request/response latency against a wirebench server (UDP or TCP echo, TCP connect time)",
		Long: `Send small echo requests to a wirebench server's port, one at a time, and report
the round-trip times (min, mean, stddev, max, p50, p90, p99, p99.9 from an HDR
histogram), loss and the requests answered per second.

  --proto udp      one datagram per request (default)
  --proto tcp      requests on one TCP connection
  --proto connect  the time of the TCP handshake (connect, then close)

With -i 0 each request goes out as soon as the previous one is answered, so
the rate shows the round trips the path and server can do per second.
The JSON document has the schema wirebench/1, kind "request-response" (docs/latency.md).`,
		Example: `  wirebench latency 192.0.2.1
  wirebench latency 192.0.2.1 --proto tcp -c 1000 -i 0 -s 1024
  wirebench latency 192.0.2.1 --proto connect -t 5 -i 0.1 --json
  wirebench latency 192.0.2.1 --label fw=1.4 --label link=usb     # saved with labels (docs/store.md)`,
		Args: exactArgs(1, "one HOST"),
		RunE: func(cmd *cobra.Command, args []string) error { return runLatency(e, cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.Port, "port", "p", session.DefaultPort, "server port")
	fl.StringVar(&f.Proto, "proto", echo.ProtoUDP, "udp, tcp or connect")
	fl.IntVarP(&f.Count, "count", "c", 0, "requests to send (default 10, or unlimited with -t)")
	fl.Float64VarP(&f.Seconds, "time", "t", 0, "send requests for this many seconds instead of a count")
	fl.Float64VarP(&f.Interval, "interval", "i", 0.01, "seconds from one request to the next (0 = back to back)")
	fl.IntVarP(&f.Size, "size", "s", echo.DefaultSize, "message size in bytes, header included (24 to 65507 UDP, 65535 TCP)")
	fl.Float64Var(&f.Timeout, "timeout", 1, "seconds to wait for each reply")
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON document (schema wirebench/1, kind request-response)")
	f.saving.register(cmd)
	return cmd
}

func runLatency(e *env, cmd *cobra.Command, host string, f *latencyCmdFlags) error {
	o := f.Options
	o.CountAndTime = cmd.Flags().Changed("count") && cmd.Flags().Changed("time")
	cfg, err := o.Config(host)
	if err != nil {
		return usage(err)
	}
	if err := f.saving.check(); err != nil {
		return err
	}
	defer f.saving.close()
	r, err := echo.Run(e.ctx, cfg)
	if err != nil {
		if ce := (echo.ConfigError{}); errors.As(err, &ce) {
			return usageError{err}
		}
		return err
	}
	id, w := f.saving.save(e, r.Kind, net.JoinHostPort(r.Test.Host, strconv.Itoa(r.Test.Port)), report.LatencySummary(r), r.StartedAt, r)
	if f.json {
		if w != "" {
			r.Warnings = append(r.Warnings, w)
		}
		r.RunID = id
		err = writeJSONDoc(e.stdout, r)
	} else {
		defer f.saving.announce(e, id, formatText)
		err = report.WriteLatency(e.stdout, r)
	}
	if err != nil {
		return err
	}
	if r.Error != "" {
		return fmt.Errorf("latency test: %s", r.Error)
	}
	return nil
}

func writeJSONDoc(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the result: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// latencyFlags are the --latency flags of client and matrix: a probe
// beside the throughput test.
type latencyFlags struct {
	lat echo.LoadProbeOptions
}

func (l *latencyFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&l.lat.Proto, "latency", "", "also measure RTT before and during the test over `PROTO`: udp (echo to the wirebench server) or icmp; --latency alone means udp")
	fl.Lookup("latency").NoOptDefVal = echo.ProtoUDP
	fl.Float64Var(&l.lat.Interval, "latency-interval", 0.01, "seconds between latency probes")
	fl.Float64Var(&l.lat.Idle, "latency-idle", 1, "seconds of idle latency probing before the test starts")
}

// probe is the --latency probe config (to the server port), nil without
// --latency; a usage error for a malformed flag.
func (l *latencyFlags) probe(port int) (*echo.LoadProbeConfig, error) {
	c, err := l.lat.Config(port)
	return c, usage(err)
}

// finishUnderLoad prints a client result with its latency probe: JSON as
// one wirebench/1 document (kind "under-load") carrying the wirebench/1 result under
// "throughput", text as the usual summary followed by the idle and loaded
// RTT table.
func finishUnderLoad(e *env, format outputFormat, text *report.Text, r *result.Result, lat *result.UnderLoad, saving *saveFlags) error {
	var err error
	lat.Throughput = result.Sanitize(r)
	id, w := saving.save(e, lat.Kind, net.JoinHostPort(r.Test.Host, strconv.Itoa(r.Test.Port)), report.TestSummary(r)+report.UnderLoadSummary(lat), r.StartedAt, lat)
	defer saving.announce(e, id, format)
	if format == formatJSON {
		if w != "" {
			lat.Warnings = append(lat.Warnings, w)
		}
		lat.RunID = id
		err = writeJSONDoc(e.stdout, lat)
	} else {
		text.Summary(r)
		if err = text.Err(); err == nil {
			err = report.WriteUnderLoad(e.stdout, lat)
		}
	}
	if err != nil {
		return err
	}
	switch {
	case r.Error != "":
		return fmt.Errorf("test ended early: %s", r.Error)
	case lat.Error != "":
		return fmt.Errorf("latency probe: %s", lat.Error)
	}
	return nil
}
