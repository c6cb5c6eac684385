package report

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// Golden tests of the text of lab UDP runs (issue 35): each document under
// testdata/lab-udp-*.json is the --json output of a real run of
//
//	wirebench lab up --medium eth100
//	wirebench lab exec a -- wirebench client 198.18.0.2 -u -b RATE --medium eth100 -t 3 --json
//
// (the queue-held ones under chrt -f 20, which kept the 2-core machine's
// other jobs off the sender's CPU; the stalled one without, at load 11–15),
// rendered by the text report and compared with the .txt beside it.
// Beyond the golden text, each states what the run must show: a sender the
// lab's 95.70 Mbit/s wire held back prints the rate the link took as a
// result line and no warning that it fell behind or that the path was not
// tested; a sender that waited for the CPU keeps that warning and claims
// no link rate.
func TestGoldenLabUDP(t *testing.T) {
	const eth100 = 95.70e6 // 1470-byte payloads on 100 Mbit/s Ethernet
	for _, tc := range []struct {
		name string
		held bool
	}{
		{"lab-udp-eth100-100M-queue-held", true},
		{"lab-udp-eth100-110M-queue-held", true},
		{"lab-udp-eth100-110M-stalled", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tc.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var r result.Result
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatalf("the recorded document does not parse: %v", err)
			}
			text := renderText(t, scenario{r: &r, local: "198.18.0.1:41503", peer: r.Test.Peer})
			golden(t, tc.name+".txt", text)
			notTested := strings.Contains(text, "fell behind") || strings.Contains(text, "not tested at the requested rate")
			took := strings.Contains(text, "Link took: ")
			if tc.held {
				bh := r.Sender.Behind
				if notTested || !took || bh == nil || !bh.QueueHeld {
					t.Fatalf("a sender the wire held back must print the rate the link took and no fell-behind warning:\n%s", text)
				}
				// The rate taken is the wire's, to within what the socket
				// buffer holds (up to 145 datagrams of 1470 bytes in 208
				// KiB) over the stretch it was measured on.
				slack := 145 * 1470 * 8 / bh.TakenS
				if math.Abs(bh.TakenBPS-eth100) > slack {
					t.Errorf("the link took %.3f Mbit/s, not eth100's %.2f (±%.3f)", bh.TakenBPS/1e6, eth100/1e6, slack/1e6)
				}
				return
			}
			if !notTested || took {
				t.Errorf("a sender that waited for the CPU must keep the warning and claim no link rate:\n%s", text)
			}
		})
	}
}
