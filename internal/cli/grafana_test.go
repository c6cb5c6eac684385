package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// grafanaDashboard is the dashboard the project ships.
var grafanaDashboard = filepath.Join("..", "..", "contrib", "grafana", "wirebench.json")

// Every PromQL expression of the Grafana dashboard (panels' targets and the
// variables' queries) names only metrics the server really exports and, on
// each, only labels it carries: read from a running server's /metrics and
// /probe after a UDP test each way, a TCP test, a latency test and a probe.
// job and instance are the labels Prometheus adds to every scrape.
func TestGrafanaDashboardMatchesMetrics(t *testing.T) {
	exprs := dashboardExprs(t)
	if len(exprs) < 10 {
		t.Fatalf("only %d expressions found in %s", len(exprs), grafanaDashboard)
	}
	t.Setenv("WIREBENCH_DB", filepath.Join(t.TempDir(), "results.db"))
	port, wport := strconv.Itoa(loopback.FreePort(t)), strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, _, done := startServerCmd(ctx, t, []string{"server", "-B", "127.0.0.1", "-p", port, "--iperf3-port", "0", "--web", "127.0.0.1:" + wport,
		"--no-save", "--medium", "eth100", "--probe-allow", "127.0.0.1/32"}, "listening")
	for _, args := range [][]string{
		{"client", "127.0.0.1", "-p", port, "-u", "-b", "1M", "-t", "1", "--no-save"},
		{"client", "127.0.0.1", "-p", port, "-u", "-R", "-b", "1M", "-t", "1", "--no-save"},
		{"client", "127.0.0.1", "-p", port, "-t", "1", "--no-save"},
		{"latency", "127.0.0.1", "-p", port, "-c", "5", "--no-save"},
	} {
		var out, errOut strings.Builder
		if code := run(ctx, args, &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
	}
	base := "http://127.0.0.1:" + wport
	families := scrape(t, base+"/probe?target=127.0.0.1:"+port+"&proto=udp&rate=1M&duration=1")
	for name, labels := range scrape(t, base+"/metrics") {
		families[name] = labels
	}
	for _, e := range exprs {
		for _, problem := range checkExpr(e, families) {
			t.Errorf("%s", problem)
		}
	}
	cancel()
	<-done
}

// dashboardExprs are the dashboard's PromQL expressions.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(grafanaDashboard)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string } `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("reading %s: %v", grafanaDashboard, err)
	}
	var exprs []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil || q.Query == "" {
			t.Fatalf("variable query %s: %v", v.Query, err)
		}
		exprs = append(exprs, q.Query)
	}
	return exprs
}

// scrape reads the metric families at url and the label names each one's
// samples carry.
func scrape(t *testing.T, url string) map[string]map[string]bool {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s: %s", url, resp.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return labelSets(mfs)
}

func labelSets(mfs map[string]*dto.MetricFamily) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for name, mf := range mfs {
		labels := map[string]bool{}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
		out[name] = labels
	}
	return out
}

// promFuncs are the PromQL functions and aggregations, and Grafana's query
// functions, an expression may call.
var promFuncs = map[string]bool{
	"sum": true, "avg": true, "min": true, "max": true, "count": true, "topk": true, "bottomk": true, "quantile": true,
	"rate": true, "irate": true, "increase": true, "delta": true, "deriv": true, "abs": true, "clamp_min": true, "clamp_max": true,
	"max_over_time": true, "min_over_time": true, "avg_over_time": true, "last_over_time": true, "label_values": true, "vector": true,
}

// promKeywords are PromQL words that are neither metrics nor functions.
var promKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "group_left": true, "group_right": true}

// scrapeLabels are the labels Prometheus adds to every series it scrapes.
var scrapeLabels = map[string]bool{"job": true, "instance": true}

var promName = regexp.MustCompile(`^[A-Za-z_:]`)

var promToken = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|\$\{?[A-Za-z0-9_]+\}?|\[[^\]]*\]|[A-Za-z_:][A-Za-z0-9_:]*|=~|!~|!=|[0-9.]+|\S`)

// checkExpr names every metric of e the server does not export, and every
// label e uses that the metrics it selects do not carry. It reads the
// PromQL a dashboard uses: selectors with matchers, function calls,
// by/without/on/ignoring lists, label_values(METRIC, LABEL), ranges.
func checkExpr(e string, families map[string]map[string]bool) []string {
	toks := promToken.FindAllString(e, -1)
	var problems, grouping []string
	used := map[string]bool{} // labels carried by the metrics e selects
	for l := range scrapeLabels {
		used[l] = true
	}
	next := func(i int) string {
		if i+1 < len(toks) {
			return toks[i+1]
		}
		return ""
	}
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		switch {
		case !promName.MatchString(tok):
			continue
		case tok == "by" || tok == "without" || tok == "on" || tok == "ignoring":
			for i += 2; i < len(toks) && toks[i] != ")"; i++ {
				if toks[i] != "," {
					grouping = append(grouping, toks[i])
				}
			}
		case promFuncs[tok] && (next(i) == "by" || next(i) == "without"): // sum by (…) (…)
		case next(i) == "(":
			if !promFuncs[tok] {
				problems = append(problems, fmt.Sprintf("%q: unknown function %s", e, tok))
			}
		case promKeywords[tok]:
		case i > 1 && toks[i-1] == "," && strings.HasPrefix(e, "label_values("):
			grouping = append(grouping, tok) // label_values(METRIC, LABEL)
		default:
			labels, ok := families[tok]
			if !ok {
				problems = append(problems, fmt.Sprintf("%q: metric %s is not exported", e, tok))
				labels = map[string]bool{}
			}
			for l := range labels {
				used[l] = true
			}
			if next(i) != "{" {
				continue
			}
			for i += 2; i < len(toks) && toks[i] != "}"; i += 4 { // LABEL OP "VALUE" [,]
				if !labels[toks[i]] && !scrapeLabels[toks[i]] {
					problems = append(problems, fmt.Sprintf("%q: metric %s has no label %s", e, tok, toks[i]))
				}
				if i+3 < len(toks) && toks[i+3] == "}" {
					i--
				}
			}
		}
	}
	sort.Strings(grouping)
	for _, l := range grouping {
		if !used[l] {
			problems = append(problems, fmt.Sprintf("%q: no metric it selects has the label %s", e, l))
		}
	}
	return problems
}

// The check above can fail: a metric the server does not export, a
// label a metric lacks (in a matcher, a by list, label_values), and an
// unknown function are each named.
func TestCheckExprCatches(t *testing.T) {
	families := map[string]map[string]bool{
		"wirebench_server_tests_total":  {"dialect": true, "protocol": true, "outcome": true},
		"wirebench_server_active_tests": {},
	}
	for expr, want := range map[string]string{
		`sum by (dialect) (rate(wirebench_server_tests_total{instance=~"$instance"}[$__rate_interval]))`: "",
		`wirebench_server_active_tests`:                                         "",
		`label_values(wirebench_server_active_tests, instance)`:                 "",
		`sum(rate(wirebench_server_test_total[5m]))`:                            "metric wirebench_server_test_total is not exported",
		`wirebench_server_tests_total{peer="a",dialect="iperf2"}`:               "has no label peer",
		`wirebench_server_tests_total{dialect="iperf2",direction="up"}`:         "has no label direction",
		`sum by (direction) (wirebench_server_tests_total)`:                     "has the label direction",
		`label_values(wirebench_server_active_tests, dialect)`:                  "has the label dialect",
		`summ(wirebench_server_active_tests)`:                                   "unknown function summ",
		`8 * sum by (dialect, peer) (rate(wirebench_server_tests_total[1m]))`:   "has the label peer",
		`wirebench_server_tests_total{outcome!="ok"} / wirebench_server_active`: "metric wirebench_server_active is not exported",
	} {
		problems := checkExpr(expr, families)
		switch {
		case want == "" && len(problems) > 0:
			t.Errorf("checkExpr(%q) = %v, want no problem", expr, problems)
		case want != "" && (len(problems) != 1 || !strings.Contains(problems[0], want)):
			t.Errorf("checkExpr(%q) = %v, want one problem with %q", expr, problems, want)
		}
	}
}
