// Command sidebyside measures wirebench, iperf 2 and iperf3 side by side on
// loopback, in one run, and prints the figures as ratios: the highest
// loss-free UDP rate found by the same binary search for each tool at 18,
// 64 and 1470 bytes, and with 2 streams at 64 and 1470 bytes (wirebench
// and iperf 2); the highest paced send rate; TCP throughput with 1,
// 2, 4 and 8 streams in interleaved rounds; CPU seconds per GB moved (for
// every TCP row); and the pacing error at 0.1 to 1000 Mbit/s.
//
// It runs the real binaries as subprocesses, a fresh server for every
// test on a free loopback port, and reads their own reports (wirebench
// --json, iperf3 -J, iperf 2's CSV). Everything goes to 127.0.0.1; every
// process is bounded in time and killed by its PID when it outlives its
// test or the bench is interrupted. bench/sidebyside.sh builds it and
// wirebench from the tree; see bench/README.md.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/units"
)

// Schema names the JSON document --json prints.
const Schema = "wirebench-bench/1"

// AskPPS is the datagram rate asked for when measuring the highest paced
// send rate: far more than any of the tools sends from one core.
const AskPPS = 10_000_000

// Plan is what one run measures, and how long each test lasts.
type Plan struct {
	Mode         string  `json:"mode"` // "quick" or "full"
	TrialSeconds int     `json:"trial_s"`
	SearchTrials int     `json:"search_trials_max"`
	SearchTol    float64 `json:"search_tolerance"`
	TCPSeconds   int     `json:"tcp_s"`
	TCPRounds    int     `json:"tcp_rounds"`
	PaceSeconds  int     `json:"pacing_s"`
	Sizes        []int   `json:"udp_sizes"`
	// ParallelSizes are the sizes of the UDP -P rows (ParallelUDP
	// streams; wirebench and iperf 2).
	ParallelSizes []int     `json:"udp_parallel_sizes,omitempty"`
	PaceRates     []float64 `json:"pacing_rates_bps"`
	PaceLength    int       `json:"pacing_length"`
	Streams       []int     `json:"tcp_streams"`
	// Many is the many-clients row (nil: not run).
	Many *ManyPlan `json:"many,omitempty"`
	// Only, when set, is the one part measured: "udp" (loss-free rate and
	// highest send rate, one stream and -P), "udp-p" (the -P rows only),
	// "tcp", "pacing" or "many".
	Only string `json:"only,omitempty"`
}

// Parts are the values of --only.
var Parts = []string{"udp", "udp-p", "tcp", "pacing", "many"}

// restrict keeps only one part of the plan (empty: all of it).
func (p *Plan) restrict(only string) error {
	switch only {
	case "":
		return nil
	case "udp":
		p.Streams, p.PaceRates, p.Many = nil, nil, nil
	case "udp-p":
		p.Sizes, p.Streams, p.PaceRates, p.Many = nil, nil, nil, nil
	case "tcp":
		p.Sizes, p.ParallelSizes, p.PaceRates, p.Many = nil, nil, nil, nil
	case "pacing":
		p.Sizes, p.ParallelSizes, p.Streams, p.Many = nil, nil, nil, nil
	case "many":
		p.Sizes, p.ParallelSizes, p.Streams, p.PaceRates = nil, nil, nil, nil
	default:
		return fmt.Errorf("--only %q: want one of %s", only, strings.Join(Parts, ", "))
	}
	p.Only = only
	return nil
}

// plans are the two modes.
func plan(quick bool) Plan {
	p := Plan{Mode: "full", TrialSeconds: 2, SearchTrials: 10, SearchTol: 0.02, TCPSeconds: 5, TCPRounds: 5, PaceSeconds: 5,
		Sizes: []int{18, 64, 1470}, ParallelSizes: []int{64, 1470}, PaceRates: []float64{1e5, 1e6, 1e7, 1e8, 1e9}, PaceLength: 1470, Streams: []int{1, 2, 4, 8}}
	many := DefaultMany
	p.Many = &many
	if quick {
		p.Mode, p.TrialSeconds, p.SearchTrials, p.SearchTol = "quick", 1, 7, 0.05
		p.TCPSeconds, p.TCPRounds, p.PaceSeconds = 1, 3, 2
	}
	return p
}

func main() {
	quick := flag.Bool("quick", false, "short run (about 4 minutes): 1 s trials, at most 7 per search, 3 TCP rounds")
	asJSON := flag.Bool("json", false, "print one JSON document ("+Schema+") instead of the table")
	wb := flag.String("wirebench", "wirebench", "the wirebench binary to measure")
	i2 := flag.String("iperf", "iperf", "the iperf 2 binary")
	i3 := flag.String("iperf3", "iperf3", "the iperf3 binary")
	only := flag.String("only", "", "measure one part only: udp, udp-p, tcp, pacing or many (`PART`)")
	rounds := flag.Int("tcp-rounds", 0, "interleaved TCP rounds per tool (`N`; default 3 with --quick, else 5)")
	manyN := flag.Int("many", 1000, "clients in the many-clients row (`N`: 60 % UDP, 20 % TCP, 20 % iperf3; 0 skips the row)")
	from := flag.String("table-from", "", "print the table of a saved --json document (`FILE`) and exit; runs nothing")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "sidebyside: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if *from != "" {
		rep, err := readReport(*from)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sidebyside:", err)
			os.Exit(1)
		}
		writeTable(os.Stdout, rep)
		return
	}
	var tools []Tool
	for _, t := range []Tool{{Wirebench, *wb}, {Iperf2, *i2}, {Iperf3, *i3}} {
		bin, err := exec.LookPath(t.Bin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sidebyside: %s not found (%v)\n", t.Name, err)
			os.Exit(2)
		}
		tools = append(tools, Tool{t.Name, bin})
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		killAll()
		fmt.Fprintln(os.Stderr, "sidebyside: interrupted; every process it started was killed")
		os.Exit(130)
	}()
	pl := plan(*quick)
	if err := pl.restrict(*only); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(2)
	}
	if *rounds > 0 {
		pl.TCPRounds = *rounds
	}
	if pl.Many != nil {
		if *manyN <= 0 {
			pl.Many = nil
		} else if *manyN != DefaultMany.UDP+DefaultMany.TCP+DefaultMany.Iperf3 {
			pl.Many.UDP, pl.Many.TCP = *manyN*6/10, *manyN/5
			pl.Many.Iperf3 = *manyN - pl.Many.UDP - pl.Many.TCP
		}
	}
	rep := measure(tools, pl, os.Stderr)
	killAll()
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(os.Stderr, "sidebyside:", err)
			os.Exit(1)
		}
		return
	}
	writeTable(os.Stdout, rep)
}

// readReport reads a saved --json document.
func readReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if rep.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %s", path, rep.Schema, Schema)
	}
	return &rep, nil
}

// Report is the whole run (the --json document).
type Report struct {
	Schema   string            `json:"schema"`
	Started  time.Time         `json:"started_at"`
	Seconds  float64           `json:"seconds"`
	Plan     Plan              `json:"plan"`
	CPUs     int               `json:"cpus"`
	Load     [2]string         `json:"loadavg"` // before, after (Linux)
	Versions map[string]string `json:"versions"`
	MaxSend  []SizeRow         `json:"max_send"`
	LossFree []SearchRow       `json:"loss_free"`
	// LossFreeParallel are the loss-free rates with ParallelUDP streams
	// (wirebench and iperf 2), summed over the streams.
	LossFreeParallel []SearchRow `json:"loss_free_parallel,omitempty"`
	TCP              []TCPRow    `json:"tcp"`
	CPU              []CPURow    `json:"cpu_s_per_gb"`
	Pacing           []PaceRow   `json:"pacing"`
	Many             *ManyRow    `json:"many,omitempty"`
	Errors           []string    `json:"errors"`
}

// SizeRow is the highest paced send rate at one datagram size.
type SizeRow struct {
	Length int              `json:"length"`
	Tools  map[string]Trial `json:"tools"`
	// Ratio is wirebench's sent datagrams/s over the better peer's.
	Ratio float64 `json:"ratio"`
}

// SearchRow is the loss-free rate at one datagram size.
type SearchRow struct {
	Length int `json:"length"`
	// Streams is how many UDP streams shared the rate (0: one).
	Streams int               `json:"streams,omitempty"`
	Tools   map[string]Search `json:"tools"`
	Ratio   float64           `json:"ratio"`
}

// TCPRow is TCP throughput with a number of streams.
type TCPRow struct {
	Streams int                `json:"streams"`
	Tools   map[string]TCPStat `json:"tools"`
	Ratio   float64            `json:"ratio"`
}

// TCPStat is one tool's rounds.
type TCPStat struct {
	RoundsBPS []float64 `json:"rounds_bps"` // the receiver's goodput per round
	MedianBPS float64   `json:"median_bps"`
	Bytes     int64     `json:"bytes"`
	CPU       float64   `json:"cpu_s"`
	Errors    int       `json:"errors"`
}

// CPURow is CPU seconds (user+system, client and server) per GB the
// receiver counted, in one kind of test. Ratio is wirebench's over the
// better (lower) peer's: below 1, wirebench uses less.
type CPURow struct {
	Test  string             `json:"test"`
	Tools map[string]float64 `json:"tools"`
	Ratio float64            `json:"ratio"`
}

// PaceRow is the pacing error at one asked rate.
type PaceRow struct {
	RateBPS float64             `json:"rate_bps"`
	Tools   map[string]PaceStat `json:"tools"`
}

// PaceStat is one tool's achieved rate, as its receiver measured it.
type PaceStat struct {
	AchievedBPS float64 `json:"achieved_bps"`
	ErrorPct    float64 `json:"error_pct"` // (achieved − asked) / asked × 100
	Loss        float64 `json:"loss"`
	Error       string  `json:"error,omitempty"`
}

// progress prints one line of what runs now.
type progress struct{ w io.Writer }

func (p progress) say(format string, a ...any) {
	if p.w != nil {
		fmt.Fprintf(p.w, "sidebyside: "+format+"\n", a...)
	}
}

// udpTrial runs one UDP test and turns it into a Trial.
func udpTrial(t Tool, p Params) Trial {
	r, err := runTest(t, p)
	tr := Trial{OfferedPPS: p.PPS}
	if err != nil {
		tr.Error = err.Error()
		return tr
	}
	tr.Sent, tr.SentPPS, tr.Received, tr.Lost, tr.Loss = r.Sent, r.SentPPS, r.Received, r.Lost, r.Loss()
	tr.RecvPPS, tr.RecvBPS, tr.Bytes, tr.CPUSeconds = r.RecvPPS(), r.RecvBPS, r.RecvBytes, r.CPUSeconds
	return tr
}

// measure runs the plan for every tool: each step below fills one part
// of the report, in the order the report shows them.
func measure(tools []Tool, pl Plan, log io.Writer) *Report {
	m := &measuring{tools: tools, pl: pl, say: progress{log}.say,
		rep: &Report{Schema: Schema, Started: time.Now().UTC(), Plan: pl, CPUs: runtime.NumCPU(), Versions: versions(tools), Errors: []string{}}}
	m.rep.Load[0] = loadavg()
	m.maxSend()
	m.lossFree()
	m.lossFreeParallel()
	m.tcp()
	m.cpu()
	m.pacing()
	m.many()
	m.rep.Load[1] = loadavg()
	m.rep.Seconds = time.Since(m.rep.Started).Seconds()
	return m.rep
}

// measuring is one run of measure: the tools, the plan, where progress
// goes and the report being filled.
type measuring struct {
	tools []Tool
	pl    Plan
	say   func(string, ...any)
	rep   *Report
}

// fail records err (when there is one) as an error of the report, saying
// what was being measured.
func (m *measuring) fail(what string, err string) {
	if err != "" {
		m.rep.Errors = append(m.rep.Errors, what+": "+err)
	}
}

// maxSend measures the highest paced send rate, per size: the search's
// upper bound.
func (m *measuring) maxSend() {
	for _, n := range m.pl.Sizes {
		row := SizeRow{Length: n, Tools: map[string]Trial{}}
		for _, t := range m.tools {
			m.say("max send rate, %d bytes, %s", n, t.Name)
			tr := udpTrial(t, Params{UDP: true, Length: n, PPS: AskPPS, Seconds: m.pl.TrialSeconds})
			m.fail(fmt.Sprintf("max send %s %d B", t.Name, n), tr.Error)
			row.Tools[t.Name] = tr
		}
		row.Ratio = ratio(row.Tools, func(t Trial) float64 { return t.SentPPS })
		m.rep.MaxSend = append(m.rep.MaxSend, row)
	}
}

// lossFree searches the loss-free rate, by the same search for every tool,
// from its own highest send rate down.
func (m *measuring) lossFree() {
	for i, n := range m.pl.Sizes {
		row := SearchRow{Length: n, Tools: map[string]Search{}}
		for _, t := range m.tools {
			upper := m.rep.MaxSend[i].Tools[t.Name].SentPPS
			s := SearchLossFree(upper, m.pl.SearchTrials, m.pl.SearchTol, func(pps float64) Trial {
				m.say("loss-free search, %d bytes, %s: %.0f datagrams/s", n, t.Name, pps)
				return udpTrial(t, Params{UDP: true, Length: n, PPS: pps, Seconds: m.pl.TrialSeconds})
			})
			for _, tr := range s.Trials {
				m.fail(fmt.Sprintf("search %s %d B at %.0f/s", t.Name, n, tr.OfferedPPS), tr.Error)
			}
			row.Tools[t.Name] = s
		}
		row.Ratio = ratio(row.Tools, func(s Search) float64 { return s.BestPPS })
		m.rep.LossFree = append(m.rep.LossFree, row)
	}
}

// lossFreeParallel searches the loss-free rate with ParallelUDP streams
// (wirebench and iperf 2; the rate offered is split over the streams),
// by the same search, from the tool's own highest send rate with as many
// streams down.
func (m *measuring) lossFreeParallel() {
	for _, n := range m.pl.ParallelSizes {
		row := SearchRow{Length: n, Streams: ParallelUDP, Tools: map[string]Search{}}
		for _, t := range m.tools {
			if t.Name == Iperf3 {
				continue
			}
			m.say("max send rate, %d bytes, %d streams, %s", n, ParallelUDP, t.Name)
			top := udpTrial(t, Params{UDP: true, Length: n, PPS: AskPPS, UDPStreams: ParallelUDP, Seconds: m.pl.TrialSeconds})
			m.fail(fmt.Sprintf("max send %s %d B -P %d", t.Name, n, ParallelUDP), top.Error)
			s := SearchLossFree(top.SentPPS, m.pl.SearchTrials, m.pl.SearchTol, func(pps float64) Trial {
				m.say("loss-free search, %d bytes, %d streams, %s: %.0f datagrams/s", n, ParallelUDP, t.Name, pps)
				return udpTrial(t, Params{UDP: true, Length: n, PPS: pps, UDPStreams: ParallelUDP, Seconds: m.pl.TrialSeconds})
			})
			for _, tr := range s.Trials {
				m.fail(fmt.Sprintf("search %s %d B -P %d at %.0f/s", t.Name, n, ParallelUDP, tr.OfferedPPS), tr.Error)
			}
			row.Tools[t.Name] = s
		}
		row.Ratio = ratio(row.Tools, func(s Search) float64 { return s.BestPPS })
		m.rep.LossFreeParallel = append(m.rep.LossFreeParallel, row)
	}
}

// tcp measures TCP in interleaved rounds: wirebench, iperf2, iperf3,
// wirebench, …
func (m *measuring) tcp() {
	for _, streams := range m.pl.Streams {
		row := TCPRow{Streams: streams, Tools: map[string]TCPStat{}}
		for round := 1; round <= m.pl.TCPRounds; round++ {
			for _, t := range m.tools {
				m.say("tcp, %s, round %d, %s", units.Plural(streams, "stream"), round, t.Name)
				st := row.Tools[t.Name]
				r, err := runTest(t, Params{Streams: streams, Seconds: m.pl.TCPSeconds})
				if err != nil {
					st.Errors++
					m.fail(fmt.Sprintf("tcp -P %d %s round %d", streams, t.Name, round), err.Error())
				} else {
					st.RoundsBPS = append(st.RoundsBPS, r.RecvBPS)
					st.Bytes += r.RecvBytes
					st.CPU += r.CPUSeconds
				}
				row.Tools[t.Name] = st
			}
		}
		for name, st := range row.Tools {
			st.MedianBPS = median(st.RoundsBPS)
			row.Tools[name] = st
		}
		row.Ratio = ratio(row.Tools, func(s TCPStat) float64 { return s.MedianBPS })
		m.rep.TCP = append(m.rep.TCP, row)
	}
}

// cpu works out CPU per GB from what was measured: over the TCP rounds,
// and over the UDP trials at the highest send rate.
func (m *measuring) cpu() {
	for _, row := range m.rep.TCP {
		m.rep.CPU = append(m.rep.CPU, cpuRow("tcp, "+units.Plural(row.Streams, "stream"), row.Tools,
			func(st TCPStat) (float64, int64) { return st.CPU, st.Bytes }))
	}
	for _, row := range m.rep.MaxSend {
		m.rep.CPU = append(m.rep.CPU, cpuRow(fmt.Sprintf("udp %d B, highest send rate", row.Length), row.Tools,
			func(tr Trial) (float64, int64) { return tr.CPUSeconds, tr.Bytes }))
	}
}

// pacing measures the pacing error, as each receiver measured the rate.
func (m *measuring) pacing() {
	for _, bps := range m.pl.PaceRates {
		row := PaceRow{RateBPS: bps, Tools: map[string]PaceStat{}}
		for _, t := range m.tools {
			m.say("pacing at %s, %s", rateText(bps), t.Name)
			r, err := runTest(t, Params{UDP: true, Length: m.pl.PaceLength, BPS: bps, Seconds: m.pl.PaceSeconds})
			var ps PaceStat
			if err != nil {
				ps.Error = err.Error()
				m.fail(fmt.Sprintf("pacing %s %s", t.Name, rateText(bps)), ps.Error)
			} else {
				ps.AchievedBPS, ps.Loss = r.RecvBPS, r.Loss()
				ps.ErrorPct = 100 * (r.RecvBPS - bps) / bps
			}
			row.Tools[t.Name] = ps
		}
		m.rep.Pacing = append(m.rep.Pacing, row)
	}
}

// many runs many clients at once against one wirebench server, when the
// plan asks for it.
func (m *measuring) many() {
	if m.pl.Many == nil {
		return
	}
	bins := map[string]string{}
	for _, t := range m.tools {
		bins[t.Name] = t.Bin
	}
	row := runMany(bins, *m.pl.Many, m.say)
	m.fail("many clients", row.Error)
	m.rep.Many = &row
}

// cpuRow is the CPU seconds per GB of each tool in one kind of test;
// use gives a tool's CPU seconds and the bytes its receiver counted.
func cpuRow[T any](test string, tools map[string]T, use func(T) (float64, int64)) CPURow {
	c := CPURow{Test: test, Tools: map[string]float64{}}
	for name, v := range tools {
		c.Tools[name] = perGB(use(v))
	}
	c.Ratio = lowRatio(c.Tools)
	return c
}

// ratio is wirebench's figure over the better (higher) of the peers'; 0
// when either is unknown.
func ratio[T any](m map[string]T, fig func(T) float64) float64 {
	wb, ok := m[Wirebench]
	if !ok {
		return 0
	}
	best := 0.0
	for name, v := range m {
		if name != Wirebench {
			best = max(best, fig(v))
		}
	}
	if best <= 0 || fig(wb) <= 0 {
		return 0
	}
	return fig(wb) / best
}

// lowRatio is wirebench's figure over the lower of the peers' (for costs:
// below 1, wirebench spends less); 0 when unknown.
func lowRatio(m map[string]float64) float64 {
	best := 0.0
	for name, v := range m {
		if name != Wirebench && v > 0 && (best == 0 || v < best) {
			best = v
		}
	}
	if best <= 0 || m[Wirebench] <= 0 {
		return 0
	}
	return m[Wirebench] / best
}

// perGB is CPU seconds per 10^9 bytes; 0 when nothing moved.
func perGB(cpu float64, bytes int64) float64 {
	if bytes <= 0 {
		return 0
	}
	return cpu / (float64(bytes) / 1e9)
}

// median of xs; 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// versions asks each tool for its version line.
func versions(tools []Tool) map[string]string {
	out := map[string]string{}
	for _, t := range tools {
		arg := "-v"
		if t.Name == Wirebench {
			arg = "version"
		}
		p, err := start(t.Bin, []string{arg}, 5*time.Second)
		if err != nil {
			continue
		}
		<-p.done
		text := strings.TrimSpace(p.out.String() + "\n" + p.errb.String())
		line, _, _ := strings.Cut(text, "\n")
		out[t.Name] = strings.TrimSpace(line)
	}
	return out
}

// loadavg is /proc/loadavg's first three figures, or "" elsewhere.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
