package iperf2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/resultcheck"

	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// groupServer is a server whose stream numbers, peers and group intervals
// the test can read.
type groupServer struct {
	*ourServer
	mu     sync.Mutex
	peers  map[int]int // stream test number → client port
	groups []groupTick
}

// groupTick is one OnGroupInterval call.
type groupTick struct {
	group   int
	streams []session.StreamInterval
	sum     *result.Interval
}

func startGroupServer(t *testing.T, interval time.Duration) *groupServer {
	t.Helper()
	gs := &groupServer{ourServer: &ourServer{results: make(chan *result.Result, 64), logs: &loopback.Buffer{}}, peers: map[int]int{}}
	gs.start(t, session.ServerConfig{
		Interval: interval,
		OnTestStart: func(id int, r *result.Result) {
			i := strings.LastIndexByte(r.Test.Peer, ':')
			p, _ := strconv.Atoi(r.Test.Peer[i+1:])
			gs.mu.Lock()
			gs.peers[id] = p
			gs.mu.Unlock()
		},
		OnGroupInterval: func(group int, streams []session.StreamInterval, sum *result.Interval) {
			gs.mu.Lock()
			gs.groups = append(gs.groups, groupTick{group, streams, sum})
			gs.mu.Unlock()
		},
	})
	return gs
}

// only collects the one result the server gives and fails when it gave
// more (the extra ones would have come with it: each stream ends before
// its group reports).
func (gs *groupServer) only(t *testing.T) *result.Result {
	t.Helper()
	r := gs.collect(t, 1)[0]
	select {
	case extra := <-gs.results:
		t.Fatalf("the server gave a second result, for %s (streams %d)", extra.Test.Peer, len(extra.Streams))
	default:
	}
	return r
}

// streamByPort maps iperf's stream ids to our group's streams, by the
// client port each stream came from.
func (gs *groupServer) streamByPort(t *testing.T, out string, r *result.Result) map[string]result.Stream {
	t.Helper()
	gs.mu.Lock()
	defer gs.mu.Unlock()
	ports := iperfStreamPorts(out)
	m := map[string]result.Stream{}
	for _, st := range r.Streams {
		for id, port := range ports {
			if gs.peers[st.ID] == port {
				m[id] = st
			}
		}
	}
	if len(m) != len(r.Streams) || len(m) != len(ports) {
		t.Fatalf("matched %d of our %d streams to iperf's streams %v (ours came from %v)", len(m), len(r.Streams), ports, gs.peers)
	}
	return m
}

// checkGroupTicks checks the group intervals the server emitted: each SUM
// is the sum of its streams' lines, and the SUMs add up to the receiver.
func (gs *groupServer) checkGroupTicks(t *testing.T, r *result.Result) {
	t.Helper()
	gs.mu.Lock()
	defer gs.mu.Unlock()
	var total int64
	sums := 0
	for _, g := range gs.groups {
		if g.sum == nil {
			t.Errorf("a group interval of %d streams has no SUM", len(g.streams))
			continue
		}
		sums++
		var b, p int64
		for _, st := range g.streams {
			b += st.Bytes
			p += st.Packets
		}
		if b != g.sum.Bytes || p != g.sum.Packets {
			t.Errorf("SUM interval %+v, but its streams add up to %d bytes, %d packets", *g.sum, b, p)
		}
		total += g.sum.Bytes
	}
	if sums < 2 {
		t.Errorf("the server emitted %d SUM intervals with -i 0.5 over 1 s, want at least 2", sums)
	}
	// A last tail shorter than a tenth of the period is merged into the
	// last interval of the result (checkIntervalsCover checks those add
	// up), not printed again: the printed SUMs may fall short by it.
	if total > r.Receiver.Bytes || total == 0 {
		t.Errorf("the emitted SUM intervals add up to %d bytes, the SUM receiver has %d", total, r.Receiver.Bytes)
	}
}

// checkSumText renders the result as the server prints it and checks it
// has one line per stream and exactly one SUM summary line.
func checkSumText(t *testing.T, r *result.Result) string {
	t.Helper()
	var b bytes.Buffer
	report.NewText(&b, "1").Summary(r)
	sums, streams := 0, 0
	for _, l := range strings.Split(b.String(), "\n") {
		if !strings.HasSuffix(l, "receiver") {
			continue
		}
		if strings.HasPrefix(l, "[SUM]") {
			sums++
		} else {
			streams++
		}
	}
	if sums != 1 || streams != len(r.Streams) {
		t.Errorf("the summary has %d SUM lines and %d stream lines, want 1 and %d:\n%s", sums, streams, len(r.Streams), b.String())
	}
	return b.String()
}

// TestInteropIperfParallelTCPToServer: "iperf -c -P 3" against our server
// is one test with three streams and a SUM, each equal to what iperf sent.
func TestInteropIperfParallelTCPToServer(t *testing.T) {
	iperfBinary(t)
	s := startGroupServer(t, 500*time.Millisecond)
	out := runIperfClient(t, s.srv.Port(), "-P", "3", "-i", "0.5")
	r := s.only(t)
	if len(r.Streams) != 3 || r.Test.Streams != 3 || r.Receiver == nil {
		t.Fatalf("our server's result: %d streams, test.streams %d, receiver %+v", len(r.Streams), r.Test.Streams, r.Receiver)
	}
	ours := s.streamByPort(t, out, r)
	var sum int64
	for _, l := range iperfLines(out) {
		if !tcpFwdLine(l) || l.Start != 0 || l.End < 0.9 {
			continue
		}
		st, ok := ours[l.ID]
		if !ok {
			t.Fatalf("no stream of ours for iperf's stream %s", l.ID)
		}
		checkTCPBytes(t, "stream "+l.ID, l.Bytes, st.Receiver.Bytes, 0)
		sum += st.Receiver.Bytes
	}
	theirs := findLine(t, out, "iperf's SUM line", func(l iperfLine) bool { return l.ID == "SUM" && l.Start == 0 && l.End >= 0.9 })
	checkTCPBytes(t, "SUM", theirs.Bytes, r.Receiver.Bytes, 0)
	if sum != r.Receiver.Bytes {
		t.Errorf("our streams add up to %d bytes, our SUM says %d", sum, r.Receiver.Bytes)
	}
	if len(r.Warnings) > 0 || r.Error != "" {
		t.Errorf("warnings %q, error %q", r.Warnings, r.Error)
	}
	checkIntervalsCover(t, r, "", r.Receiver.Bytes, 0, r.Receiver.Seconds)
	s.checkGroupTicks(t, r)
	t.Logf("summary:\n%s", checkSumText(t, r))
}

// TestInteropIperfParallelUDPToServer: "iperf -c -u -P 3 -b 3M" against
// our server: one test, each stream's Server Report equal to our stream,
// the SUM's datagram total equal to what iperf sent (less one per stream,
// iperf's own convention).
func TestInteropIperfParallelUDPToServer(t *testing.T) {
	iperfBinary(t)
	s := startGroupServer(t, 500*time.Millisecond)
	out := runIperfClient(t, s.srv.Port(), "-u", "-b", "3M", "-P", "3", "-i", "0.5")
	r := s.only(t)
	checkSaneIperfText(t, out)
	if len(r.Streams) != 3 || r.Test.Streams != 3 || r.Receiver == nil {
		t.Fatalf("our server's result: %d streams, test.streams %d, receiver %+v", len(r.Streams), r.Test.Streams, r.Receiver)
	}
	ours := s.streamByPort(t, out, r)
	sent := iperfSent(out)
	var sentAll, reportBytes, total, bytesAll int64
	seen := 0
	for _, l := range iperfLines(out) {
		if !udpRecvLine(l) {
			continue
		}
		st, ok := ours[l.ID]
		if !ok {
			t.Fatalf("no stream of ours for iperf's stream %s", l.ID)
		}
		seen++
		rc := st.Receiver
		if l.Lost != 0 || l.Total != rc.Total || l.Bytes != rc.Bytes || rc.Lost != 0 || rc.Total != sent[l.ID]-1 {
			t.Errorf("stream %s: iperf's Server Report %v, iperf sent %d; our stream %+v", l.ID, l, sent[l.ID], *rc)
		}
		sentAll += sent[l.ID]
		reportBytes += l.Bytes
		total += rc.Total
		bytesAll += rc.Bytes
	}
	if seen != 3 {
		t.Fatalf("iperf printed %d Server Reports, want 3", seen)
	}
	rc := r.Receiver
	t.Logf("iperf sent %d datagrams in all; our SUM: %d/%d datagrams, %d bytes", sentAll, rc.Lost, rc.Total, rc.Bytes)
	if rc.Total != sentAll-3 || rc.Total != total || rc.Bytes != bytesAll || rc.Bytes != reportBytes || rc.Lost != 0 ||
		rc.Packets != total || rc.OutOfOrder != 0 || dupsOf(rc) != 0 {
		t.Errorf("our SUM %+v; streams add up to total %d, %d bytes; iperf sent %d, its reports %d bytes", *rc, total, bytesAll, sentAll, reportBytes)
	}
	checkIntervalsCover(t, r, "", rc.Bytes, 0, rc.Seconds)
	s.checkGroupTicks(t, r)
	t.Logf("summary:\n%s", checkSumText(t, r))

	// The JSON document carries the streams and the sum.
	var b bytes.Buffer
	if err := report.WriteJSON(&b, r, false); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Test     struct{ Streams int }        `json:"test"`
		Receiver struct{ Total, Bytes int64 } `json:"receiver"`
		Streams  []struct {
			ID       int                          `json:"id"`
			Receiver struct{ Total, Bytes int64 } `json:"receiver"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("our JSON does not decode: %v", err)
	}
	var jt int64
	for _, st := range doc.Streams {
		jt += st.Receiver.Total
	}
	if doc.Test.Streams != 3 || len(doc.Streams) != 3 || doc.Receiver.Total != rc.Total || jt != rc.Total {
		t.Errorf("JSON: %s", b.String())
	}
}

// standInStream is one TCP stream of a stand-in client: an optional
// header, then n bytes of data, then a close that waits for the server's.
func standInStream(t *testing.T, addr string, hdr []byte, n int) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Errorf("dial: %v", err)
		return
	}
	defer c.Close()
	payload := make([]byte, n)
	session.FillPattern(payload)
	if hdr == nil {
		clear(payload[:4]) // header-less: first word 0, as zperf
	}
	_ = c.SetDeadline(time.Now().Add(guard))
	if _, err := c.Write(append(hdr, payload...)); err != nil {
		t.Errorf("write: %v", err)
		return
	}
	_ = c.(*net.TCPConn).CloseWrite()
	_, _ = io.Copy(io.Discard, c) // a CLIENTHDRACK, then the server's close
}

// header60 is a 2.1-style TCP header announcing threads streams.
func header60(threads int32, amount int32) []byte {
	h := iperf2.NewClientHeader(false, threads, 5001)
	h.Amount = amount
	return h.AppendTo(nil)
}

// TestServerGroupsParallelStreams checks the grouping rule with stand-in
// TCP clients (and our own client for UDP): what is grouped, what is not,
// and a client that announces more streams than it opens.
func TestServerGroupsParallelStreams(t *testing.T) {
	const n = 64 << 10
	amount := iperf2.AmountForDuration(time.Second)
	type conn struct{ hdr []byte } // every stand-in stream starts at once
	cases := []struct {
		name    string
		conns   []conn
		results []int // streams per result, in any order (0 = a single test)
		warn    string
	}{
		{"announced 3, opened 3", []conn{{header60(3, amount)}, {header60(3, amount)}, {header60(3, amount)}}, []int{3}, ""},
		{"announced 4, opened 3", []conn{{header60(4, amount)}, {header60(4, amount)}, {header60(4, amount)}}, []int{3}, "announced 4 parallel streams but 3 arrived"},
		{"announced 1 each", []conn{{header60(1, amount)}, {header60(1, amount)}}, []int{0, 0}, ""},
		{"different headers", []conn{{header60(2, amount)}, {header60(2, amount-100)}}, []int{0, 0}, "announced 2 parallel streams but 1 arrived"},
		{"header-less together", []conn{{nil}, {nil}, {nil}}, []int{0, 0, 0}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startGroupServer(t, 0)
			addr := net.JoinHostPort(loHost, strconv.Itoa(s.srv.Port()))
			var wg sync.WaitGroup
			for _, c := range tc.conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					standInStream(t, addr, c.hdr, n)
				}()
			}
			wg.Wait()
			var got []int
			var warns []string
			for _, r := range s.collect(t, len(tc.results)) {
				got = append(got, len(r.Streams))
				warns = append(warns, r.Warnings...)
				if r.Receiver == nil {
					t.Fatalf("a result without receiver")
				}
				var b int64
				for _, st := range r.Streams {
					b += st.Receiver.Bytes
				}
				if len(r.Streams) > 0 && b != r.Receiver.Bytes {
					t.Errorf("streams add up to %d bytes, the SUM says %d", b, r.Receiver.Bytes)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.results) {
				t.Errorf("results with %v streams, want %v", got, tc.results)
			}
			joined := strings.Join(warns, "\n")
			if tc.warn != "" && !strings.Contains(joined, tc.warn) {
				t.Errorf("warnings %q, want one containing %q", warns, tc.warn)
			}
			if tc.warn == "" && len(warns) > 0 {
				t.Errorf("unexpected warnings %q", warns)
			}
			select {
			case r := <-s.results:
				t.Errorf("an extra result with %d streams", len(r.Streams))
			default:
			}
		})
	}

	// Our own client with -P 3: the server's SUM is what the client sent.
	for _, udp := range []bool{false, true} {
		t.Run(fmt.Sprintf("our client -P 3 udp=%v", udp), func(t *testing.T) {
			t.Parallel()
			s := startGroupServer(t, 0)
			cfg := session.ClientConfig{Host: loHost, Port: s.srv.Port(), Parallel: 3, Duration: 300 * time.Millisecond, UDP: udp}
			if udp {
				cfg.Length = 200
			} else {
				cfg.Bytes = 1 << 20
				cfg.Duration = 0
			}
			c := runOurClient(t, cfg)
			r := s.only(t)
			if len(r.Streams) != 3 || r.Receiver == nil {
				t.Fatalf("the server's result has %d streams, receiver %+v", len(r.Streams), r.Receiver)
			}
			if udp {
				// Each stream's Total is its last id: our sent datagrams,
				// the final one included.
				if r.Receiver.Total != c.Sender.Packets || r.Receiver.Lost != 0 {
					t.Errorf("server SUM %+v; our client sent %+v", *r.Receiver, *c.Sender)
				}
			} else if sent := resultcheck.SentTCP(t, c, c.Sender); r.Receiver.Bytes != sent {
				t.Errorf("server SUM %d bytes; our client sent %d", r.Receiver.Bytes, sent)
			}
		})
	}
}
