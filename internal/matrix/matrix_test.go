package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf3"
)

// fakeSession answers each test from a table keyed by what the config asks
// for, and records the configs it was given.
type fakeSession struct {
	runs  []session.ClientConfig
	reply func(cfg session.ClientConfig, call int) (*result.Result, error)
}

func (f *fakeSession) Run(_ context.Context, cfg session.ClientConfig) (*result.Result, *result.UnderLoad, error) {
	f.runs = append(f.runs, cfg)
	r, err := f.reply(cfg, len(f.runs))
	return r, nil, err
}

// fakeResult is what a client of cfg would report: bps received on each
// flow, UDP with lost datagrams out of packets.
func fakeResult(cfg session.ClientConfig, bps float64, lost, packets int64) *result.Result {
	r := result.New("client")
	r.Test = result.Test{Protocol: result.TCP, Direction: result.DirSend, Length: 1470}
	if cfg.UDP {
		r.Test.Protocol = result.UDP
	}
	rcv := &result.Receiver{Bytes: int64(bps / 8), BitsPerSecond: bps, Packets: packets, Lost: lost, JitterMS: 0.25, Seconds: 1}
	snd := &result.Sender{Bytes: int64(bps / 8), BitsPerSecond: bps}
	switch {
	case cfg.Reverse:
		r.Test.Direction = result.DirReceive
		r.Receiver = rcv
	case cfg.Tradeoff:
		r.Sender, r.Receiver = snd, rcv
		back := *rcv
		back.BitsPerSecond = bps / 2
		r.Reverse = &result.Flow{Direction: result.DirReceive, Receiver: &back}
	case cfg.FullDuplex:
		// As the real client reports it: what we sent, and what we
		// received on the same connection; no reverse flow.
		r.Test.Direction, r.Test.Mode = result.DirBidir, "full-duplex"
		back := *rcv
		back.BitsPerSecond = bps / 4
		r.Sender, r.Receiver = snd, &back
	case cfg.Dual || cfg.Bidir:
		r.Test.Direction = result.DirBidir
		r.Sender, r.Receiver = snd, rcv
		back := *rcv
		back.BitsPerSecond = bps / 4
		r.Reverse = &result.Flow{Direction: result.DirReceive, Receiver: &back}
	default:
		r.Sender, r.Receiver = snd, rcv
	}
	return r
}

func base(dialect string) session.ClientConfig {
	return session.ClientConfig{Host: "127.0.0.1", Port: 5001, Dialect: dialect, Duration: time.Second}
}

func TestRunIperf2AsksReverseForDownload(t *testing.T) {
	f := &fakeSession{reply: func(cfg session.ClientConfig, _ int) (*result.Result, error) {
		return fakeResult(cfg, 90e6, 10, 990), nil
	}}
	m, err := Run(context.Background(), f, Config{Base: base(session.DialectIperf2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.runs) != 4 {
		t.Fatalf("ran %d tests, want 4", len(f.runs))
	}
	want := []struct {
		proto, dir string
		reverse    bool
	}{{result.TCP, result.MatrixUpload, false}, {result.TCP, result.MatrixDownload, true}, {result.UDP, result.MatrixUpload, false}, {result.UDP, result.MatrixDownload, true}}
	// Each protocol's download runs before its upload (iperf 2.1.8's UDP
	// server fails -R after a forward test); the cells read upload first.
	runOrder := []int{1, 0, 3, 2}
	for i, w := range want {
		c, run := m.Cells[i], f.runs[runOrder[i]]
		if c.Protocol != w.proto || c.Direction != w.dir || run.Reverse != w.reverse || run.UDP != (w.proto == result.UDP) {
			t.Errorf("cell %d = %s %s (run reverse=%v udp=%v), want %s %s reverse=%v", i, c.Protocol, c.Direction,
				run.Reverse, run.UDP, w.proto, w.dir, w.reverse)
		}
		if c.Status != StatusOK || c.BitsPerSecond == nil || *c.BitsPerSecond != 90e6 || c.Basis != "receiver" {
			t.Errorf("cell %d: %+v, want ok at 90e6 receiver", i, c)
		}
		if c.Result == nil {
			t.Errorf("cell %d carries no result", i)
		}
	}
	for _, c := range m.Cells[:2] {
		if c.LossPercent != nil || c.JitterMS != nil {
			t.Errorf("TCP cell %s has loss/jitter %v/%v, want none", c.Name(), c.LossPercent, c.JitterMS)
		}
	}
	for _, c := range m.Cells[2:] {
		if c.LossPercent == nil || math.Abs(*c.LossPercent-1) > 1e-9 || c.JitterMS == nil || *c.JitterMS != 0.25 {
			t.Errorf("UDP cell %s: loss %v jitter %v, want 1 %% and 0.25 ms", c.Name(), c.LossPercent, c.JitterMS)
		}
	}
}

func TestRunLegacyUsesTradeoffAndItsReverseFlow(t *testing.T) {
	f := &fakeSession{reply: func(cfg session.ClientConfig, _ int) (*result.Result, error) {
		return fakeResult(cfg, 80e6, 0, 100), nil
	}}
	m, err := Run(context.Background(), f, Config{Base: base(session.DialectIperf2Legacy), Protocols: []string{result.UDP}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Cells) != 2 || !f.runs[0].Tradeoff || f.runs[0].Reverse {
		t.Fatalf("cells %d, download run %+v: want 2 cells, download via -r", len(m.Cells), f.runs[0])
	}
	if d := m.Cells[1]; d.Method != "-r" || d.BitsPerSecond == nil || *d.BitsPerSecond != 40e6 {
		t.Errorf("download cell %+v: want the -r connect-back flow's 40e6", d)
	}
}

func TestRunRawMarksDownloadUnsupported(t *testing.T) {
	f := &fakeSession{reply: func(cfg session.ClientConfig, _ int) (*result.Result, error) {
		return fakeResult(cfg, 50e6, 0, 100), nil
	}}
	m, err := Run(context.Background(), f, Config{Base: base(session.DialectRaw), Bidir: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.runs) != 2 {
		t.Errorf("ran %d tests, want only the 2 uploads", len(f.runs))
	}
	unsupported := 0
	for _, c := range m.Cells {
		if c.Direction == result.MatrixUpload && !c.Simultaneous {
			if c.Status != StatusOK {
				t.Errorf("%s: %s, want ok", c.Name(), c.Status)
			}
			continue
		}
		if c.Status != StatusUnsupported || c.Reason == "" || c.BitsPerSecond != nil || c.Result != nil {
			t.Errorf("%s: %+v, want unsupported with a reason and no figure", c.Name(), c)
		}
		unsupported++
	}
	if unsupported != 6 {
		t.Errorf("%d unsupported cells, want 6 (download and both bidir cells, per protocol)", unsupported)
	}
}

func TestRunBidirFillsBothCellsFromOneTest(t *testing.T) {
	f := &fakeSession{reply: func(cfg session.ClientConfig, _ int) (*result.Result, error) {
		return fakeResult(cfg, 60e6, 0, 100), nil
	}}
	m, err := Run(context.Background(), f, Config{Base: base(session.DialectIperf2), Bidir: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.runs) != 6 || len(m.Cells) != 8 {
		t.Fatalf("%d tests, %d cells; want 6 tests, 8 cells", len(f.runs), len(m.Cells))
	}
	if !f.runs[2].FullDuplex || !f.runs[5].Dual {
		t.Errorf("bidir runs: TCP %+v, UDP %+v; want --full-duplex for TCP and -d for UDP", f.runs[2], f.runs[5])
	}
	up, down := m.Cells[2], m.Cells[3]
	if !up.Simultaneous || !down.Simultaneous || up.Result != down.Result || *up.BitsPerSecond != 60e6 || *down.BitsPerSecond != 15e6 {
		t.Errorf("bidir cells %+v / %+v: want one result, upload 60e6 and download 15e6", up, down)
	}
}

func TestRunFailedCellDoesNotStopTheRest(t *testing.T) {
	f := &fakeSession{reply: func(cfg session.ClientConfig, call int) (*result.Result, error) {
		switch call {
		case 1:
			return nil, errors.New("connecting: connection refused")
		case 2:
			r := fakeResult(cfg, 10e6, 0, 100)
			r.Error = "the connection broke"
			return r, nil
		}
		return fakeResult(cfg, 10e6, 0, 100), nil
	}}
	m, err := Run(context.Background(), f, Config{Base: base(session.DialectIperf2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.runs) != 4 {
		t.Fatalf("ran %d tests, want 4", len(f.runs))
	}
	// Run order: tcp download (refused), tcp upload (broke), udp ...
	if c := m.Cells[1]; c.Status != StatusFailed || !strings.Contains(c.Reason, "refused") || c.BitsPerSecond != nil {
		t.Errorf("download cell %+v: want failed with the reason", c)
	}
	if c := m.Cells[0]; c.Status != StatusFailed || !strings.Contains(c.Reason, "broke") || c.BitsPerSecond == nil {
		t.Errorf("upload cell %+v: want failed, reason given, partial figure kept", c)
	}
	if m.Cells[2].Status != StatusOK || m.Cells[3].Status != StatusOK {
		t.Errorf("later cells %s/%s, want ok", m.Cells[2].Status, m.Cells[3].Status)
	}
	if len(m.Warnings) < 2 {
		t.Errorf("warnings %q: want one per failed cell", m.Warnings)
	}
}

func TestRunSenderBasisWhenPeerReportsNothing(t *testing.T) {
	f := &fakeSession{reply: func(cfg session.ClientConfig, _ int) (*result.Result, error) {
		r := fakeResult(cfg, 70e6, 0, 0)
		if !cfg.Reverse {
			r.Receiver = nil // iperf 2 servers send no TCP report
			r.Sender.Basis = result.BasisAcknowledged
		}
		return r, nil
	}}
	m, err := Run(context.Background(), f, Config{Base: base(session.DialectIperf2), Protocols: []string{result.TCP}})
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Cells[0]; c.Basis != "sender" || c.Status != StatusOK || !strings.Contains(c.Reason, "sender") {
		t.Errorf("upload cell %+v: want ok on the sender's count, saying so", c)
	}
}

func TestRunRetriesBusyIperf3Server(t *testing.T) {
	f := &fakeSession{reply: func(cfg session.ClientConfig, call int) (*result.Result, error) {
		if call == 2 {
			return nil, iperf3.ErrBusy
		}
		return fakeResult(cfg, 10e6, 0, 100), nil
	}}
	m, err := Run(context.Background(), f, Config{Base: base(session.DialectIperf3), Protocols: []string{result.TCP}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.runs) != 3 || m.Cells[0].Status != StatusOK {
		t.Errorf("%d runs, upload %s: want the busy test tried again and ok", len(f.runs), m.Cells[0].Status)
	}
}

func TestRunStoppedMarksTheRestNotRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeSession{reply: func(cfg session.ClientConfig, _ int) (*result.Result, error) {
		cancel()
		return fakeResult(cfg, 10e6, 0, 100), nil
	}}
	m, err := Run(ctx, f, Config{Base: base(session.DialectIperf2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.runs) != 1 || m.Error == "" {
		t.Fatalf("%d runs, error %q: want 1 run and the matrix marked stopped", len(f.runs), m.Error)
	}
	for i, c := range m.Cells {
		if i == 1 { // tcp download ran first
			if c.Status != StatusOK {
				t.Errorf("%s: %s, want ok", c.Name(), c.Status)
			}
			continue
		}
		if c.Status != StatusFailed || !strings.Contains(c.Reason, "not run") {
			t.Errorf("%s: %s %q, want failed, not run", c.Name(), c.Status, c.Reason)
		}
	}
}

func TestRunRejectsBadConfigBeforeAnyTest(t *testing.T) {
	f := &fakeSession{reply: func(cfg session.ClientConfig, _ int) (*result.Result, error) { return nil, nil }}
	b := base("nonsense")
	if _, err := Run(context.Background(), f, Config{Base: b}); err == nil || !session.IsConfigError(err) {
		t.Errorf("err %v, want a config error", err)
	}
	if len(f.runs) != 0 {
		t.Errorf("ran %d tests with a bad config", len(f.runs))
	}
}

func TestPlaceAndJSONKeys(t *testing.T) {
	f := &fakeSession{reply: func(cfg session.ClientConfig, _ int) (*result.Result, error) {
		r := fakeResult(cfg, 95.7e6, 0, 100)
		r.Receiver.JitterMS = math.NaN() // must not break the JSON
		return r, nil
	}}
	cfg := Config{Base: base(session.DialectIperf2), Protocols: []string{result.UDP},
		Place: func(r *result.Result, bps float64) (float64, bool) { return bps / 95.7e6 * 100, true }}
	m, err := Run(context.Background(), f, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	var doc struct {
		Schema, Kind string
		Cells        []map[string]any
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Kind != "matrix" || doc.Schema != result.Schema || len(doc.Cells) != 2 {
		t.Fatalf("kind %q schema %q cells %d", doc.Kind, doc.Schema, len(doc.Cells))
	}
	for _, k := range []string{"protocol", "direction", "bits_per_second", "loss_percent", "jitter_ms", "percent_of_line", "status", "result"} {
		if _, ok := doc.Cells[0][k]; !ok {
			t.Errorf("cell JSON has no %q: %v", k, doc.Cells[0])
		}
	}
	if p := doc.Cells[0]["percent_of_line"]; p != 100.0 {
		t.Errorf("percent_of_line %v, want 100", p)
	}
}

// TestRunSaysTheDialectHintOnce: when the peer resets every TCP cell at
// once (an iperf3 server asked for iperf2 tests), the hint to try
// --dialect iperf3 is said once, naming the cells, and not in each cell's
// reason or failure warning.
func TestRunSaysTheDialectHintOnce(t *testing.T) {
	f := &fakeSession{reply: func(cfg session.ClientConfig, _ int) (*result.Result, error) {
		r := fakeResult(cfg, 10e6, 0, 100)
		if !cfg.UDP {
			r.Receiver = nil
			r.Error = "the peer reset the connection at once (0.30 s into the test): " + session.Iperf3Hint + " (write: connection reset by peer)"
		}
		return r, nil
	}}
	m, err := Run(context.Background(), f, Config{Base: base(session.DialectIperf2)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range m.Cells {
		if strings.Contains(c.Reason, session.Iperf3Hint) {
			t.Errorf("cell %s repeats the hint: %q", c.Name(), c.Reason)
		}
		if c.Protocol == result.TCP && (c.Status != StatusFailed || !strings.Contains(c.Reason, "reset the connection at once")) {
			t.Errorf("cell %s: %s %q, want failed saying the peer reset at once", c.Name(), c.Status, c.Reason)
		}
	}
	n := 0
	for _, w := range m.Warnings {
		n += strings.Count(w, session.Iperf3Hint)
	}
	want := "the peer ended the test at once in 2 cells (tcp upload, tcp download): " + session.Iperf3Hint
	if n != 1 || !slices.Contains(m.Warnings, want) {
		t.Errorf("warnings %q\nwant the hint once: %q", m.Warnings, want)
	}
}
