package session

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// TestApplyOmit: the omitted intervals' counts and seconds come off the
// figures counted here, per flow and per stream; a peer's report is kept
// whole, with a warning unless the peer omits itself.
func TestApplyOmit(t *testing.T) {
	r := &result.Result{
		Test: result.Test{Protocol: result.UDP},
		Intervals: []result.Interval{
			{Start: 0, End: 1, Bytes: 100, Packets: 10, Flow: "forward", Omitted: true},
			{Start: 0, End: 1, Bytes: 50, Packets: 5, Lost: 1, Flow: "reverse", Omitted: true},
			{Start: 1, End: 3, Bytes: 300, Packets: 30, Flow: "forward"},
			{Start: 1, End: 3, Bytes: 150, Packets: 15, Lost: 2, Flow: "reverse"},
		},
		Sender:   &result.Sender{Bytes: 400, Packets: 40, Seconds: 3, PacketsPerSecond: 13},
		Receiver: &result.Receiver{Bytes: 390, Packets: 39, Seconds: 3, Source: "peer-report", Intervals: []result.Interval{{End: 1}, {Start: 1, End: 3}}},
		Reverse:  &result.Flow{Receiver: &result.Receiver{Bytes: 200, Packets: 20, Lost: 3, Total: 23, Seconds: 3, Source: "local"}},
		Streams:  []result.Stream{{ID: 1, Sender: &result.Sender{Bytes: 400, Packets: 40, Seconds: 3}}},
	}
	per := map[string]result.Interval{"1": {Bytes: 100, Packets: 10}}
	applyOmit(r, time.Second, per, false)
	if s := r.Sender; s.Bytes != 300 || s.Packets != 30 || s.Seconds != 2 || s.BitsPerSecond != 1200 || s.PacketsPerSecond != 15 {
		t.Errorf("sender %+v, want 300 bytes, 30 packets over 2 s", s)
	}
	if rr := r.Receiver; rr.Bytes != 390 || rr.Seconds != 3 || !rr.Intervals[0].Omitted || rr.Intervals[1].Omitted {
		t.Errorf("peer's receiver %+v: want it whole, its first interval marked omitted", rr)
	}
	if rr := r.Reverse.Receiver; rr.Bytes != 150 || rr.Packets != 15 || rr.Lost != 2 || rr.Total != 17 || rr.Seconds != 2 {
		t.Errorf("reverse receiver %+v, want 150 bytes, 15 packets, 2 lost of 17 over 2 s", rr)
	}
	if s := r.Streams[0].Sender; s.Bytes != 300 || s.Seconds != 2 {
		t.Errorf("stream sender %+v, want 300 bytes over 2 s", s)
	}
	if r.Test.Omit != 1 {
		t.Errorf("test.omit_s %v, want 1", r.Test.Omit)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "peer's report covers the whole test") {
		t.Errorf("warnings %q, want one about the peer's report", r.Warnings)
	}

	// A flow that started after the period (the -r connect-back) keeps
	// everything; a peer that omits itself raises no warning.
	r2 := &result.Result{
		Intervals: []result.Interval{{Start: 0, End: 1, Bytes: 10, Omitted: true}, {Start: 1, End: 2, Bytes: 10}, {Start: 2, End: 3, Bytes: 7, Flow: "reverse"}},
		Sender:    &result.Sender{Bytes: 20, Seconds: 2},
		Receiver:  &result.Receiver{Bytes: 20, Seconds: 2, Source: "peer-report"},
		Reverse:   &result.Flow{Receiver: &result.Receiver{Bytes: 7, Seconds: 1, Source: "local"}},
	}
	applyOmit(r2, time.Second, nil, true)
	if r2.Sender.Bytes != 10 || r2.Sender.Seconds != 1 || r2.Reverse.Receiver.Bytes != 7 || r2.Reverse.Receiver.Seconds != 1 || len(r2.Warnings) != 0 {
		t.Errorf("sender %+v, reverse %+v, warnings %q", r2.Sender, r2.Reverse.Receiver, r2.Warnings)
	}
}

// TestOmitStreamResults: what we send an iperf3 peer leaves the omitted
// period's bytes out, with times from its end, as iperf3 3.12 does; UDP
// packets and errors stay whole (the peer takes its own omitted count off).
func TestOmitStreamResults(t *testing.T) {
	res := &iperf3.Results{Streams: []iperf3.StreamResult{
		{ID: 1, Bytes: 1000, Packets: 100, EndTime: 3},
		{ID: 3, Bytes: 500, Packets: 60, Errors: 10, EndTime: 3.1},
	}}
	per := map[string]result.Interval{"1": {Bytes: 300, Packets: 30}, "3": {Bytes: 100, Packets: 10, Lost: 4}}
	omitStreamResults(res, per, time.Second)
	if s := res.Streams[0]; s.Bytes != 700 || s.Packets != 100 || s.EndTime != 2 {
		t.Errorf("sent stream %+v, want 700 bytes, 100 packets, end 2 s", s)
	}
	if s := res.Streams[1]; s.Bytes != 400 || s.Packets != 60 || s.Errors != 10 || math.Abs(s.EndTime-2.1) > 1e-9 {
		t.Errorf("received stream %+v, want 400 bytes, 60 expected, 10 lost, end 2.1 s", s)
	}
}

// TestOmitValidate: -O is whole seconds, at most iperf3's 60, and only for
// a timed test.
func TestOmitValidate(t *testing.T) {
	for _, tc := range []struct {
		omit  time.Duration
		bytes int64
		ok    bool
	}{{0, 0, true}, {time.Second, 0, true}, {60 * time.Second, 0, true}, {61 * time.Second, 0, false},
		{-time.Second, 0, false}, {1500 * time.Millisecond, 0, false}, {time.Second, 1 << 20, false}} {
		for _, dialect := range []string{DialectIperf2, DialectIperf3} {
			_, err := Prepare(ClientConfig{Host: "127.0.0.1", Dialect: dialect, Omit: tc.omit, Bytes: tc.bytes})
			if (err == nil) != tc.ok {
				t.Errorf("%s -O %v -n %d: err %v, want ok=%v", dialect, tc.omit, tc.bytes, err, tc.ok)
			}
			if err != nil && !IsConfigError(err) {
				t.Errorf("%s -O %v: %v is not a ConfigError", dialect, tc.omit, err)
			}
		}
	}
}

// checkOmitted checks a result of a -O 1 test: the intervals up to 1 s
// are marked and the rest not, and the summary's bytes are those of the
// intervals after it, plus at most finBytes (an iperf2 UDP sender counts
// its FIN datagrams, which no interval holds).
func checkOmitted(t *testing.T, who string, r *result.Result, summaryBytes, finBytes int64) {
	t.Helper()
	if r.Test.Omit != 1 {
		t.Errorf("%s: test.omit_s %v, want 1", who, r.Test.Omit)
	}
	var kept int64
	omitted := 0
	for _, in := range r.Intervals {
		if in.Omitted != (in.End <= 1+1e-9) {
			t.Errorf("%s: interval %.3f-%.3f omitted=%v", who, in.Start, in.End, in.Omitted)
		}
		if in.Omitted {
			omitted++
		} else {
			kept += in.Bytes
		}
	}
	if omitted == 0 {
		t.Errorf("%s: no interval marked omitted in %+v", who, r.Intervals)
	}
	if summaryBytes < kept || summaryBytes > kept+finBytes {
		t.Errorf("%s: summary %d bytes, the intervals after the omitted second %d", who, summaryBytes, kept)
	}
}

// near reports whether a and b are within frac of each other.
func near(a, b int64, frac float64) bool {
	return math.Abs(float64(a-b)) <= frac*math.Max(float64(a), float64(b))
}

// TestOmitClientAgainstRealIperf3Server: with -O 1 our client sends
// "omit":1, and the real iperf3 server marks its first second omitted and
// leaves it out of its summary, as our own summary leaves it out.
func TestOmitClientAgainstRealIperf3Server(t *testing.T) {
	iperf3Bin(t)
	for _, tc := range []struct {
		name string
		cfg  ClientConfig
	}{
		{"tcp", ClientConfig{Duration: 2 * time.Second, Omit: time.Second}},
		{"udp", ClientConfig{UDP: true, Rate: units.Rate{Value: 2e6}, Length: 500, Duration: 2 * time.Second, Omit: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			r, rep := runAgainstRealIperf3(t, &cfg)
			if rep.Start.TestStart == nil || rep.Start.TestStart.Omit != 1 {
				t.Fatalf("iperf3 -s test_start %+v, want omit 1", rep.Start.TestStart)
			}
			if len(rep.Intervals) == 0 || rep.Intervals[0].Sum == nil || rep.Intervals[0].Sum.Omitted == nil || !*rep.Intervals[0].Sum.Omitted {
				t.Errorf("iperf3 -s did not mark its first interval omitted: %+v", rep.Intervals)
			}
			sr := rep.End.SumReceived // (3.12's UDP "sum" has bytes 0 on a server)
			if sr == nil {
				t.Fatalf("iperf3 -s reported no receiver sum")
			}
			// The server's summary covers the 2 s after the omitted one,
			// not 3 s.
			if sr.Seconds < 1.5 || sr.Seconds > 2.5 {
				t.Errorf("iperf3 -s summary over %.3f s, want about 2 (the omitted second left out)", sr.Seconds)
			}
			if r.Sender == nil || r.Receiver == nil {
				t.Fatalf("result without sender or receiver: %+v", r)
			}
			sent := r.Sender.Bytes
			if r.Sender.BytesWritten > 0 {
				sent = r.Sender.BytesWritten
			}
			checkOmitted(t, "our client", r, sent, 0)
			if r.Sender.Seconds < 1.5 || r.Sender.Seconds > 2.5 {
				t.Errorf("our sender summary over %.3f s, want about 2", r.Sender.Seconds)
			}
			if r.Receiver.Bytes != sr.Bytes {
				t.Errorf("our receiver figure %d bytes, iperf3 -s counted %d", r.Receiver.Bytes, sr.Bytes)
			}
			// Both sides leave out their own first second: the counts
			// agree within what crossed the boundary meanwhile.
			if !near(r.Sender.Bytes, sr.Bytes, 0.05) {
				t.Errorf("we sent %d bytes after the omitted second, iperf3 -s received %d", r.Sender.Bytes, sr.Bytes)
			}
		})
	}
}

// TestOmitRealIperf3ClientOurServer: `iperf3 -c -O 1` against our server:
// our server marks the first second omitted and leaves it out of its
// summary and of the results it sends, which iperf3 prints as its
// receiver figure.
func TestOmitRealIperf3ClientOurServer(t *testing.T) {
	iperf3Bin(t)
	ts := startI3Server(t, ServerConfig{}, Iperf3Config{})
	for i, args := range [][]string{
		{"-t", "2", "-O", "1", "-J"},
		{"-u", "-b", "2M", "-l", "500", "-t", "2", "-O", "1", "-J"},
	} {
		rep, _ := runIperf3Client(t, ts.i3port, args...)
		r := ts.waitResults(i + 1)[i]
		if r.Error != "" || r.Receiver == nil {
			t.Fatalf("%v: our server's result %+v", args, r)
		}
		checkOmitted(t, "our server", r, r.Receiver.Bytes, 0)
		if r.Receiver.Seconds < 1.5 || r.Receiver.Seconds > 2.5 {
			t.Errorf("%v: our server's summary over %.3f s, want about 2", args, r.Receiver.Seconds)
		}
		sent, recv := rep.End.SumSent, rep.End.SumReceived
		if sent == nil || recv == nil {
			t.Fatalf("%v: iperf3 -c printed no sums: %+v", args, rep.End)
		}
		if recv.Bytes != r.Receiver.Bytes {
			t.Errorf("%v: iperf3 -c prints %d bytes received, our server's summary has %d", args, recv.Bytes, r.Receiver.Bytes)
		}
		if recv.Seconds < 1.5 || recv.Seconds > 2.5 {
			t.Errorf("%v: iperf3 -c prints the receiver over %.3f s, want about 2", args, recv.Seconds)
		}
		if !near(sent.Bytes, r.Receiver.Bytes, 0.05) {
			t.Errorf("%v: iperf3 -c sent %d bytes after its omitted second, our server counted %d", args, sent.Bytes, r.Receiver.Bytes)
		}
	}
}

// TestOmitOurClientOurServer: -O 1 between our own client and server, in
// the iperf2 dialect (omitted on our side only; the server's report says
// so) and the iperf3 dialect (both sides omit).
func TestOmitOurClientOurServer(t *testing.T) {
	ts := startI3Server(t, ServerConfig{}, Iperf3Config{})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	for _, cfg := range []ClientConfig{
		{Dialect: DialectIperf2, Port: ts.port, Duration: time.Second, Omit: time.Second},
		{Dialect: DialectIperf2, Port: ts.port, UDP: true, Rate: units.Rate{Value: 2e6}, Length: 500, Duration: time.Second, Omit: time.Second, Interval: 500 * time.Millisecond},
		{Dialect: DialectIperf3, Port: ts.i3port, Duration: time.Second, Omit: time.Second},
		{Dialect: DialectIperf3, Port: ts.i3port, UDP: true, Rate: units.Rate{Value: 2e6}, Length: 500, Duration: time.Second, Omit: time.Second},
	} {
		cfg.Host = "127.0.0.1"
		r, err := RunClient(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		who := cfg.Dialect + " " + r.Test.Protocol
		if r.Error != "" || r.Sender == nil || r.Receiver == nil {
			t.Fatalf("%s: result %+v", who, r)
		}
		sent := r.Sender.Bytes
		if r.Sender.BytesWritten > 0 {
			sent = r.Sender.BytesWritten
		}
		var fins int64
		if cfg.UDP && cfg.Dialect == DialectIperf2 {
			fins = 20 * int64(cfg.Length)
		}
		checkOmitted(t, who, r, sent, fins)
		if r.Test.Duration != 1 || r.Sender.Seconds < 0.5 || r.Sender.Seconds > 1.5 {
			t.Errorf("%s: duration_s %v, sender over %.3f s; want 1 and about 1", who, r.Test.Duration, r.Sender.Seconds)
		}
		peerWhole := false
		for _, w := range r.Warnings {
			peerWhole = peerWhole || strings.Contains(w, "peer's report covers the whole test")
		}
		if cfg.Dialect == DialectIperf2 {
			// The server knows nothing of -O: its report covers 2 s.
			if !peerWhole || r.Receiver.Seconds < 1.5 {
				t.Errorf("%s: receiver over %.3f s, warnings %q; want the whole 2 s test, said so", who, r.Receiver.Seconds, r.Warnings)
			}
		} else {
			if peerWhole || !near(r.Receiver.Bytes, r.Sender.Bytes, 0.05) || r.Receiver.Seconds > 1.5 {
				t.Errorf("%s: receiver %d bytes over %.3f s, sender %d; warnings %q", who, r.Receiver.Bytes, r.Receiver.Seconds, r.Sender.Bytes, r.Warnings)
			}
		}
	}
}
