package compare

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

const udpDoc = `{"schema":"wirebench/1","kind":"test","test":{"protocol":"udp"},
 "intervals":[
  {"start_s":0,"end_s":1,"bits_per_second":100e6,"packets":990,"lost":10,"jitter_ms":0.1},
  {"start_s":1,"end_s":2,"bits_per_second":96e6,"packets":1000,"lost":0,"jitter_ms":0.3},
  {"start_s":2,"end_s":3,"bits_per_second":98e6,"packets":995,"lost":5,"jitter_ms":0.2},
  {"start_s":3,"end_s":3.2,"bits_per_second":1e6,"packets":10,"lost":0,"jitter_ms":9},
  {"start_s":0,"end_s":1,"bits_per_second":5e6,"flow":"reverse"}],
 "sender":{"bits_per_second":99e6},
 "receiver":{"bits_per_second":97.5e6,"packets":2995,"lost":15,"total":3010,"jitter_ms":0.25}}`

func metric(t *testing.T, ms []Metric, name string) Metric {
	t.Helper()
	for _, m := range ms {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no metric %q in %+v", name, ms)
	return Metric{}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestMetricsTest(t *testing.T) {
	kind, ms, err := Metrics([]byte(udpDoc))
	if err != nil || kind != "test" {
		t.Fatal(kind, err)
	}
	tp := metric(t, ms, "throughput")
	// The receiver's figure; samples are the three full forward
	// intervals (not the 0.2 s tail, not the reverse flow): 100, 96, 98.
	if tp.Value != 97.5e6 || tp.N != 3 || !near(tp.SD, 2e6, 1) || !tp.HigherIsBetter || ms[0].Name != "throughput" {
		t.Errorf("throughput %+v", tp)
	}
	loss := metric(t, ms, "loss_percent")
	if !near(loss.Value, 100*15.0/3010, 1e-9) || loss.N != 3 || loss.HigherIsBetter {
		t.Errorf("loss %+v", loss)
	}
	if j := metric(t, ms, "jitter_ms"); j.Value != 0.25 || j.N != 3 {
		t.Errorf("jitter %+v", j)
	}
}

func TestPairRatioAndCI(t *testing.T) {
	a := []Metric{{Name: "throughput", Unit: "bit/s", Value: 100, N: 10, SD: 2, HigherIsBetter: true}, {Name: "only_a", Value: 1}}
	b := []Metric{{Name: "throughput", Unit: "bit/s", Value: 88, N: 10, SD: 2, HigherIsBetter: true}, {Name: "only_b", Value: 1}}
	d, onlyA, onlyB := Pair(a, b)
	if len(d) != 1 || strings.Join(onlyA, ",") != "only_a" || strings.Join(onlyB, ",") != "only_b" {
		t.Fatalf("%+v %v %v", d, onlyA, onlyB)
	}
	if d[0].Ratio == nil || !near(*d[0].Ratio, 0.88, 1e-12) || d[0].Difference != -12 {
		t.Errorf("%+v", d[0])
	}
	// Equal variances and sizes: df = 18, t = 2.101, se = sqrt(0.4+0.4).
	wantCI := 2.101 * math.Sqrt(0.8)
	if d[0].DifferenceCI95 == nil || !near(*d[0].DifferenceCI95, wantCI, 1e-9) {
		t.Errorf("difference CI %v, want %v", d[0].DifferenceCI95, wantCI)
	}
	wantR := 2.101 * 0.88 * math.Sqrt(0.4/1e4+0.4/(88*88))
	if d[0].RatioCI95 == nil || !near(*d[0].RatioCI95, wantR, 1e-12) {
		t.Errorf("ratio CI %v, want %v", d[0].RatioCI95, wantR)
	}
	// No samples: no interval, never a made-up one; A = 0: no ratio.
	d, _, _ = Pair([]Metric{{Name: "x", Value: 0}}, []Metric{{Name: "x", Value: 3}})
	if d[0].Ratio != nil || d[0].DifferenceCI95 != nil || d[0].RatioCI95 != nil {
		t.Errorf("%+v", d[0])
	}
}

func TestTQuantile975(t *testing.T) {
	for _, tc := range []struct{ df, want float64 }{{1, 12.706}, {9.7, 2.262}, {30, 2.042}, {40, 2.021}, {60, 2.000}, {120, 1.980}, {1e6, 1.960}} {
		if got := TQuantile975(tc.df); !near(got, tc.want, 0.0015) {
			t.Errorf("t(%v) = %v, want %v", tc.df, got, tc.want)
		}
	}
}

func TestMetricsOtherKinds(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"kind":"request-response","received":100,"loss_pct":1,"requests_per_second":50,"rtt":{"count":100,"mean_ms":0.5,"stddev_ms":0.1,"p50_ms":0.4,"p99_ms":2}}`,
			"rtt_mean_ms=0.5/100,rtt_p50_ms=0.4/0,rtt_p99_ms=2/0,loss_percent=1/0,requests_per_second=50/0"},
		{`{"kind":"ping","sizes":[{"size":56,"received":3,"loss_pct":0,"rtt_ms":{"avg":1,"mdev":0.1,"p50":1}},{"size":1472,"received":0,"loss_pct":100}]}`,
			"rtt_avg_ms@56=1/3,rtt_p50_ms@56=1/0,loss_percent@56=0/0,loss_percent@1472=100/0"},
		{`{"kind":"matrix","cells":[{"protocol":"tcp","direction":"upload","bits_per_second":94e6,"status":"ok"},{"protocol":"udp","direction":"download","status":"unsupported"}]}`,
			"throughput_tcp_upload=9.4e+07/0"},
		{`{"kind":"sweep","sizes":[{"size":64,"rate_pps":9000},{"size":1470,"rate_pps":5000,"repeats":{"rates_pps":[4900,5000,5100]}},{"size":1472,"rate_pps":3000,"limited_by_host":true}]}`,
			"rate_pps@64=9000/0,rate_pps@1470=5000/3"},
		{`{"kind":"rfc2544","sizes":[{"size":1472,"done":["throughput","latency","loss","backtoback"],"ndr_pps":812,"pdr_pps":813,"latency":[{"load_percent":10,"p50_ms":6.2,"p99_ms":6.5}],"loss_curve":[{"offered_percent":100,"loss_percent":90}],"back_to_back":{"at_line_rate":true,"searches":[{"frames":4},{"frames":5}]},"back_to_back_frames":4.5},{"size":18,"done":[],"latency":[],"loss_curve":[]}]}`,
			"ndr_pps@1472=812/0,pdr_pps@1472=813/0,latency_p50_ms_10pct@1472=6.2/0,latency_p99_ms_10pct@1472=6.5/0,loss_percent_100pct@1472=90/0,back_to_back_frames@1472=4.5/2"},
		// No NDR found: left out (or 0 in a run saved before that); the
		// PDR that was found is compared.
		{`{"kind":"rfc2544","sizes":[{"size":466,"done":["throughput"],"ndr_found":false,"pdr_found":true,"pdr_pps":952,"latency":[],"loss_curve":[]},{"size":64,"done":["throughput"],"ndr_pps":0,"pdr_pps":0,"latency":[],"loss_curve":[]}]}`,
			"pdr_pps@466=952/0"},
		{`{"kind":"rfc2544","sizes":[{"size":1472,"done":["latency"],"latency":[{"load_percent":50,"kind":"one_way","p50_ms":0.1,"p99_ms":0.2},{"load_percent":90,"kind":"delay_variation","p50_ms":0.3,"p99_ms":0.4}],"loss_curve":[]}]}`,
			"one_way_p50_ms_50pct@1472=0.1/0,one_way_p99_ms_50pct@1472=0.2/0,delay_variation_p50_ms_90pct@1472=0.3/0,delay_variation_p99_ms_90pct@1472=0.4/0"},
		{`{"kind":"under-load","throughput":{"kind":"test","test":{"protocol":"tcp"},"sender":{"bits_per_second":9e6,"tcp":{"retransmits":4}}},"idle":{"rtt":{"count":1,"mean_ms":0.2,"p50_ms":0.2,"p99_ms":0.2}},"loaded":{"rtt":{"count":0}}}`,
			"throughput=9e+06/0,retransmits=4/0,idle_rtt_mean_ms=0.2/0,idle_rtt_p50_ms=0.2/0,idle_rtt_p99_ms=0.2/0"},
	} {
		_, ms, err := Metrics([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.Name+"="+strconv.FormatFloat(m.Value, 'g', -1, 64)+"/"+strconv.Itoa(m.N))
		}
		if g := strings.Join(got, ","); g != tc.want {
			t.Errorf("got  %s\nwant %s", g, tc.want)
		}
	}
}

func TestMetricsBadInput(t *testing.T) {
	for _, doc := range []string{``, `{`, `[]`, `{"kind":"nope"}`, `{"kind":"test","intervals":5}`} {
		if _, _, err := Metrics([]byte(doc)); err == nil {
			t.Errorf("Metrics(%q) gave no error", doc)
		}
	}
}

// FuzzMetrics: any document gives figures or an error, never a panic, and
// pairing a document's figures with themselves gives ratio 1 where defined.
func FuzzMetrics(f *testing.F) {
	f.Add([]byte(udpDoc))
	f.Add([]byte(`{"kind":"ping","sizes":[{"size":56,"received":1}]}`))
	f.Add([]byte(`{"kind":"matrix","cells":[{"status":"ok","protocol":"udp"}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		_, ms, err := Metrics(doc)
		if err != nil {
			return
		}
		d, onlyA, onlyB := Pair(ms, ms)
		if len(onlyA)+len(onlyB) != 0 {
			t.Fatalf("self-pair left out %v %v", onlyA, onlyB)
		}
		for _, x := range d {
			if x.Ratio != nil && !math.IsNaN(x.A) && !math.IsInf(x.A, 0) && *x.Ratio != 1 {
				t.Fatalf("self ratio %v for %+v", *x.Ratio, x)
			}
		}
	})
}

func TestJudge(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name string
		d    Diff
		tol  float64
		want string
	}{
		{"throughput down 12 %", Diff{HigherIsBetter: true, A: 100, B: 88, Difference: -12, Ratio: f(0.88)}, 0.05, Worse},
		{"throughput down 3 %, within 5 %", Diff{HigherIsBetter: true, A: 100, B: 97, Difference: -3, Ratio: f(0.97)}, 0.05, Same},
		{"throughput up 10 %", Diff{HigherIsBetter: true, A: 100, B: 110, Difference: 10, Ratio: f(1.1)}, 0.05, Better},
		{"jitter up 50 %", Diff{A: 2, B: 3, Difference: 1, Ratio: f(1.5)}, 0.05, Worse},
		{"jitter down 50 %", Diff{A: 2, B: 1, Difference: -1, Ratio: f(0.5)}, 0.05, Better},
		{"down 12 % but within the noise", Diff{HigherIsBetter: true, A: 100, B: 88, Difference: -12, Ratio: f(0.88), DifferenceCI95: f(15)}, 0.05, Same},
		{"loss from 0", Diff{A: 0, B: 0.5, Difference: 0.5}, 0.05, Worse},
		{"both 0", Diff{A: 0, B: 0}, 0.05, Same},
	} {
		if got := Judge(tc.d, tc.tol); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestMetricsSenderIntervals (issue 19, point 4): a UDP client's intervals
// are the sender's and measure no loss or jitter, whether they say so
// (measured_by, keys absent) or are an older document's zeros: loss and
// jitter then have no samples and no interval (never ±0), the pair says
// why, and throughput keeps its samples.
func TestMetricsSenderIntervals(t *testing.T) {
	const marked = `{"schema":"wirebench/1","kind":"test","role":"client","test":{"protocol":"udp","direction":"send"},
 "intervals":[{"start_s":0,"end_s":1,"bits_per_second":100e6,"packets":1000,"measured_by":"sender"},
  {"start_s":1,"end_s":2,"bits_per_second":98e6,"packets":980,"measured_by":"sender"}],
 "sender":{"bits_per_second":99e6},
 "receiver":{"bits_per_second":97e6,"packets":1960,"lost":20,"total":1980,"jitter_ms":0.2,"source":"peer-report"}}`
	old := strings.ReplaceAll(marked, `"measured_by":"sender"`, `"lost":0,"out_of_order":0,"duplicates":0,"jitter_ms":0`)
	for name, doc := range map[string]string{"marked": marked, "older document": old} {
		_, ms, err := Metrics([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if tp := metric(t, ms, "throughput"); tp.N != 2 {
			t.Errorf("%s: throughput %+v: want its 2 samples", name, tp)
		}
		for _, n := range []string{"loss_percent", "jitter_ms"} {
			if m := metric(t, ms, n); m.N != 0 || !strings.Contains(m.NoSamples, "sender's") {
				t.Errorf("%s: %s %+v: want no samples, saying why", name, n, m)
			}
		}
		diffs, _, _ := Pair(ms, ms)
		for _, d := range diffs {
			if d.Name == "loss_percent" && (d.DifferenceCI95 != nil || !strings.HasPrefix(d.NoCI, "A: ")) {
				t.Errorf("%s: loss diff %+v: want no interval and why", name, d)
			}
		}
	}
}

// TestNames: runs are named by the labels they were selected by, else by
// the labels that tell them apart, else by id.
func TestNames(t *testing.T) {
	pic := func(link string) map[string]string { return map[string]string{"device": "pic32", "link": link} }
	for _, tc := range []struct {
		what string
		runs []Run
		want []string
	}{
		{"labels that differ", []Run{{ID: 12, Labels: pic("eth")}, {ID: 13, Labels: pic("usb")}}, []string{"link=eth", "link=usb"}},
		{"selected by labels", []Run{{ID: 12, Labels: pic("eth"), SelectedBy: map[string]string{"device": "pic32", "link": "eth"}}, {ID: 13, Labels: pic("usb")}},
			[]string{"device=pic32,link=eth", "link=usb"}},
		{"same labels", []Run{{ID: 12, Labels: pic("eth")}, {ID: 13, Labels: pic("eth")}}, []string{"run 12", "run 13"}},
		{"no labels", []Run{{ID: 12}, {ID: 13, Labels: map[string]string{"fw": "1.4"}}}, []string{"run 12", "fw=1.4"}},
	} {
		got := Names(tc.runs)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: names %q, want %q", tc.what, got, tc.want)
		}
	}
	if w := Who("link=usb", 13); w != "link=usb (run 13)" {
		t.Errorf("Who(link=usb, 13) = %q", w)
	}
	if w := Who("run 13", 13); w != "run 13" {
		t.Errorf("Who(run 13, 13) = %q", w)
	}
}
