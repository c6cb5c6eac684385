package iperf3

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// TestOmitStreamResults: what we send an iperf3 peer leaves the omitted
// period's bytes out, with times from its end, as iperf3 3.12 does; UDP
// packets and errors stay whole (the peer takes its own omitted count off).
func TestOmitStreamResults(t *testing.T) {
	res := &i3wire.Results{Streams: []i3wire.StreamResult{
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

// TestOmitClientAgainstRealIperf3Server: with -O 1 our client sends
// "omit":1, and the real iperf3 server marks its first second omitted and
// leaves it out of its summary, as our own summary leaves it out.
func TestOmitClientAgainstRealIperf3Server(t *testing.T) {
	iperf3Bin(t)
	for _, tc := range []struct {
		name string
		cfg  session.ClientConfig
	}{
		{"tcp", session.ClientConfig{Duration: 2 * time.Second, Omit: time.Second}},
		{"udp", session.ClientConfig{UDP: true, Rate: units.Rate{Value: 2e6}, Length: 500, Duration: 2 * time.Second, Omit: time.Second}},
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
	ts := startI3Server(t, session.ServerConfig{}, Config{})
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
	ts := startI3Server(t, session.ServerConfig{}, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	for _, cfg := range []session.ClientConfig{
		{Dialect: session.DialectIperf2, Port: ts.port, Duration: time.Second, Omit: time.Second},
		{Dialect: session.DialectIperf2, Port: ts.port, UDP: true, Rate: units.Rate{Value: 2e6}, Length: 500, Duration: time.Second, Omit: time.Second, Interval: 500 * time.Millisecond},
		{Dialect: session.DialectIperf3, Port: ts.i3port, Duration: time.Second, Omit: time.Second},
		{Dialect: session.DialectIperf3, Port: ts.i3port, UDP: true, Rate: units.Rate{Value: 2e6}, Length: 500, Duration: time.Second, Omit: time.Second},
	} {
		cfg.Host = "127.0.0.1"
		r, err := runClient(ctx, cfg)
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
		if cfg.UDP && cfg.Dialect == session.DialectIperf2 {
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
		if cfg.Dialect == session.DialectIperf2 {
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
