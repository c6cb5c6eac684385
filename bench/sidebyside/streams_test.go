package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// The -P 2 testdata are real outputs, recorded on loopback: wirebench
// client -P 2 --json and its server's --json lines (64 B: two results, one
// per stream, as short datagrams carry no test header; 1470 B: one
// group result with both streams), iperf 2.1.8 -P 2 -y C from both ends.

func TestParseWirebenchUDPStreams(t *testing.T) {
	for _, c := range []struct {
		name            string
		recv, lost, exp int64
		bytes           int64
		pps, secs, bps  float64
		sent            int64
		client, server  string
	}{
		{"64 B, a result per stream", 10001 + 9998, 0, 10001 + 9998, 640064 + 639872,
			10001/1.000064099 + 9998/1.000035916, 1.000064099, 5119664.771785241 + 5119882.385094829, 19999,
			"wb-udp-p2-64.json", "wb-udp-p2-64-server.json"},
		{"1470 B, one group result", 9989 + 10000, 0, 9989 + 10000, 14683830 + 14700000,
			9989/1.003217295 + 10000/0.99686759, 1.003217295, 117601464.74879344 + 117967912.98909442, 19989,
			"wb-udp-p2-1470.json", "wb-udp-p2-1470-server.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			server := readTestdata(t, c.server)
			if n := wbStreamsCovered(server); n != 2 {
				t.Errorf("the server's results cover %d streams, want 2", n)
			}
			got, err := parseWirebenchStreams(readTestdata(t, c.client), server, 2)
			if err != nil {
				t.Fatal(err)
			}
			if got.Sent != c.sent || got.Received != c.recv || got.Lost != c.lost || got.Expected != c.exp || got.RecvBytes != c.bytes ||
				!closeTo(got.RecvSeconds, c.secs) || !closeTo(got.RecvBPS, c.bps) || !closeTo(got.RecvPPS(), c.pps) {
				t.Errorf("got %+v (rx pps %v)\nwant sent %d, received/lost/expected %d/%d/%d, %d bytes in %v s, %v bit/s, %v datagrams/s",
					got, got.RecvPPS(), c.sent, c.recv, c.lost, c.exp, c.bytes, c.secs, c.bps, c.pps)
			}
			if _, err := parseWirebenchStreams(readTestdata(t, c.client), server, 3); err == nil {
				t.Error("results of 2 streams read as 3")
			}
		})
	}
}

func TestWBStreamsCoveredPartial(t *testing.T) {
	server := readTestdata(t, "wb-udp-p2-64-server.json")
	first, _, _ := strings.Cut(string(server), "\n")
	if n := wbStreamsCovered([]byte(first + "\n{\"schema\":\"wire")); n != 1 {
		t.Errorf("one result and a partial line cover %d streams, want 1", n)
	}
	if n := wbStreamsCovered(nil); n != 0 {
		t.Errorf("no output covers %d streams", n)
	}
}

func TestParseIperf2UDPStreams(t *testing.T) {
	got, err := parseIperf2UDPStreams(readTestdata(t, "iperf2-udp-p2-client.csv"), readTestdata(t, "iperf2-udp-p2-server.csv"), 64, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Server lines: 10002 expected, 0 lost in 640344 bytes at 5116888
	// bit/s; 10004 expected, 11 lost in 639552 bytes at 5124112 bit/s
	// (each stream's time is its bytes over its rate, as for one
	// stream). Client lines: 640268 and 640140 bytes of 64.
	s1, s2 := 640344*8/5116888.0, 639552*8/5124112.0
	sentSecs := max(640268*8/5120633.0, 640140*8/5120884.0)
	want := Counts{Sent: 640268/64 + 640140/64, Received: 10002 + 10004 - 11, Lost: 11, Expected: 10002 + 10004,
		RecvBytes: 640344 + 639552, RecvBPS: 5116888 + 5124112}
	if got.Sent != want.Sent || got.Received != want.Received || got.Lost != want.Lost || got.Expected != want.Expected ||
		got.RecvBytes != want.RecvBytes || got.RecvBPS != want.RecvBPS || !closeTo(got.RecvSeconds, max(s1, s2)) ||
		!closeTo(got.SentSeconds, sentSecs) || !closeTo(got.SentPPS, float64(want.Sent)/sentSecs) ||
		!closeTo(got.RecvPPS(), 10002/s1+(10004-11)/s2) {
		t.Errorf("got %+v (rx pps %v)\nwant %+v, streams' times %v and %v s", got, got.RecvPPS(), want, s1, s2)
	}
	if _, err := parseIperf2UDPStreams(readTestdata(t, "iperf2-udp-p2-client.csv"), readTestdata(t, "iperf2-udp-p2-server.csv"), 64, 3); err == nil {
		t.Error("reports of 2 streams read as 3")
	}
}

func TestParallelUDPArgs(t *testing.T) {
	p := Params{UDP: true, Length: 64, PPS: 20000, UDPStreams: 2, Seconds: 1}
	wb, i2 := Tool{Name: Wirebench}, Tool{Name: Iperf2}
	if a := wb.clientArgs(5001, p); !slices.Contains(a, "20000pps") || !hasPair(a, "-P", "2") {
		t.Errorf("wirebench client %v: want -P 2 and the summed rate 20000pps", a)
	}
	if a := i2.clientArgs(5001, p); !slices.Contains(a, "10000pps") || !hasPair(a, "-P", "2") {
		t.Errorf("iperf client %v: want -P 2 and each stream's rate 10000pps", a)
	}
	if a := wb.serverArgs(5001, p); slices.Contains(a, "-1") {
		t.Errorf("wirebench server %v: -1 would end it with the first stream", a)
	}
	if a := i2.serverArgs(5001, p); !hasPair(a, "-P", "2") {
		t.Errorf("iperf server %v: want -P 2 (two streams before it ends)", a)
	}
	if a := wb.serverArgs(5001, Params{UDP: true, Length: 64, PPS: 1}); !slices.Contains(a, "-1") {
		t.Errorf("wirebench server for one stream %v: want -1", a)
	}
}

func hasPair(a []string, k, v string) bool {
	i := slices.Index(a, k)
	return i >= 0 && i+1 < len(a) && a[i+1] == v
}

func TestTableParallelRows(t *testing.T) {
	rep := &Report{Schema: Schema, Plan: plan(true), LossFreeParallel: []SearchRow{{Length: 64, Streams: ParallelUDP, Ratio: 2.5,
		Tools: map[string]Search{Wirebench: {BestPPS: 250000, Bound: "converged", Trials: make([]Trial, 6)},
			Iperf2: {BestPPS: 100000, Bound: "converged", Trials: make([]Trial, 7)}}}}}
	var b bytes.Buffer
	writeTable(&b, rep)
	out := squash(b.String())
	for _, want := range []string{"Loss-free UDP rate with -P 2", "64 250 k 100 k 2.50x 6/7"} {
		if !strings.Contains(out, squash(want)) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
