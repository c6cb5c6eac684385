package iperf3

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/session"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// i3SummaryRe matches a summary line of real iperf3's text output:
// "[  5][TX-C]   0.00-1.00   sec   545 MBytes  4.56 Gbits/sec    2             sender".
var i3SummaryRe = regexp.MustCompile(`^\[\s*(\d+|SUM)\](\[[A-Z]+-[CS]\])?\s+[\d.]+-[\d.]+\s+sec\s+([\d.]+) ([KMGT]?)Bytes\s+[\d.]+ [KMGT]?bits/sec\s+(\d+)?\s*(sender|receiver)$`)

// TestIperf3RealClientRetrColumn runs the real iperf3 3.12 client with -R
// and --bidir against our server and reads its human output: the Retr
// column must be there and hold the kernel's small retransmission counts
// (not 4294967295, iperf3's rendering of −1), and each stream's sender and
// receiver lines must be about the same stream (the server numbers its
// streams in the order the client connected them).
func TestIperf3RealClientRetrColumn(t *testing.T) {
	ts := startI3Server(t, session.ServerConfig{}, Config{})
	for _, args := range [][]string{{"-t", "1", "-R"}, {"-t", "1", "--bidir"}, {"-t", "1", "--bidir", "-P", "2"}, {"-t", "1", "-R", "-P", "2"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			_, text := runIperf3Client(t, ts.i3port, args...)
			if !regexp.MustCompile(`(?m)^\[ ID\](\[Role\])? Interval\s+Transfer\s+Bitrate\s+Retr$`).MatchString(text) {
				t.Fatalf("no Retr column in the summary:\n%s", text)
			}
			type pair struct{ sent, rcvd float64 }
			per := map[string]*pair{}
			senders := 0
			for _, line := range strings.Split(text, "\n") {
				m := i3SummaryRe.FindStringSubmatch(strings.TrimSpace(line))
				if m == nil {
					continue
				}
				key := m[1] + m[2]
				if per[key] == nil {
					per[key] = &pair{}
				}
				n, _ := strconv.ParseFloat(m[3], 64)
				n *= map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m[4]]
				if m[6] == "receiver" {
					per[key].rcvd = n
					continue
				}
				senders++
				per[key].sent = n
				if m[5] == "" {
					t.Errorf("sender line without a Retr figure: %q", line)
					continue
				}
				retr, err := strconv.ParseUint(m[5], 10, 64)
				if err != nil || retr >= 1<<20 {
					t.Errorf("Retr %q in %q: want the kernel's small count", m[5], line)
				}
			}
			if senders == 0 {
				t.Fatalf("no sender summary lines in:\n%s", text)
			}
			for key, p := range per {
				// Each side rounds to three figures; what arrived is at most
				// what was sent, and something arrived.
				if p.rcvd <= 0 || p.rcvd > p.sent*1.01 {
					t.Errorf("stream %s: sender %.0f bytes, receiver %.0f: the lines are not about one stream\n%s", key, p.sent, p.rcvd, text)
				}
			}
		})
	}
}

// TestI3SetRetrans pins iperf3 3.12's send_results rules: −1 from an end
// that only receives, 1 with the counts of the streams it sends on when it
// sends TCP and knows them, 0 otherwise; −1 for every other stream.
func TestI3SetRetrans(t *testing.T) {
	known, unknown := i3Retr{n: 7, ok: true}, i3Retr{}
	for _, tt := range []struct {
		name string
		udp  bool
		send []bool
		retr []i3Retr
		has  int64
		per  []int64
	}{
		{"receives only", false, []bool{false, false}, []i3Retr{unknown, unknown}, -1, []int64{-1, -1}},
		{"sends tcp", false, []bool{true, true}, []i3Retr{known, {n: 0, ok: true}}, 1, []int64{7, 0}},
		{"bidir tcp", false, []bool{false, true}, []i3Retr{unknown, known}, 1, []int64{-1, 7}},
		{"no tcp_info", false, []bool{true}, []i3Retr{unknown}, 0, []int64{-1}},
		{"sends udp", true, []bool{true}, []i3Retr{unknown}, 0, []int64{-1}},
	} {
		res := &i3wire.Results{Streams: make([]i3wire.StreamResult, len(tt.send))}
		i3SetRetrans(res, tt.udp, tt.send, tt.retr)
		if res.SenderHasRetransmits != tt.has {
			t.Errorf("%s: sender_has_retransmits %d, want %d", tt.name, res.SenderHasRetransmits, tt.has)
		}
		for k, want := range tt.per {
			if got := res.Streams[k].Retransmits; got != want {
				t.Errorf("%s: stream %d retransmits %d, want %d", tt.name, k, got, want)
			}
		}
	}
}
