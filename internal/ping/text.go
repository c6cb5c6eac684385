package ping

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
)

// ReassemblyKind is the "kind" of the reassembly probe's JSON document
// (its "schema" is result.Schema).
const ReassemblyKind = result.KindReassembly

// ReassemblyDoc is the reassembly probe's JSON document.
type ReassemblyDoc = result.ReassemblyDoc

// Doc is res as its JSON document.
func (res *ReassemblyResult) Doc() ReassemblyDoc {
	return ReassemblyDoc{Schema: result.Schema, Kind: ReassemblyKind, Reassembly: (*result.Reassembly)(res)}
}

// WriteEvent prints one reply (or failure) as a line, the way ping does.
func WriteEvent(w io.Writer, ev Event) {
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }
	switch ev.Outcome {
	case OutcomeReply:
		fmt.Fprintf(w, "%d bytes from %s: seq=%d time=%s ms\n", ev.Size, ev.From, ev.Seq, ms(ev.RTT))
	case OutcomeLate, OutcomeDuplicate:
		fmt.Fprintf(w, "%d bytes from %s: seq=%d time=%s ms (%s)\n", ev.Size, ev.From, ev.Seq, ms(ev.RTT), ev.Outcome)
	case OutcomeCorrupt:
		fmt.Fprintf(w, "%d bytes from %s: seq=%d payload differs from what was sent (corrupt)\n", ev.Size, ev.From, ev.Seq)
	case OutcomeTooBig:
		fmt.Fprintf(w, "size %d seq=%d: %s\n", ev.Size, ev.Seq, result.PingNeedsFragmentation(ev.PathMTU))
	case OutcomeUnreachable:
		fmt.Fprintf(w, "size %d seq=%d: unreachable (from %s)\n", ev.Size, ev.Seq, ev.From)
	case OutcomeSendError:
		fmt.Fprintf(w, "size %d seq=%d: %v\n", ev.Size, ev.Seq, ev.Err)
	}
}

// WriteReassembly prints the reassembly probe's findings as text; explain
// adds every step of the searches.
func WriteReassembly(w io.Writer, res *ReassemblyResult, explain bool) {
	fmt.Fprintf(w, "socket: %s; ladder for path MTU %d\n", report.PingSocketWords(res.Socket, 0), res.PathMTU)
	writeSearch(w, "without DF", res.WithoutDF, explain)
	if res.WithDF != nil {
		writeSearch(w, "with DF", *res.WithDF, explain)
	} else {
		fmt.Fprintf(w, "with DF: not searched: %s\n", res.DFError)
	}
	if res.Error != "" {
		fmt.Fprintf(w, "stopped early: %s\n", res.Error)
	}
}

// writeSearch prints one search: its finding, and with explain its steps.
func writeSearch(w io.Writer, label string, s SearchResult, explain bool) {
	switch {
	case s.Largest < 0:
		fmt.Fprintf(w, "%s: no size answered; first failing %d bytes (%s)\n", label, s.FirstFailing, s.FailReason)
	case s.FirstFailing == 0:
		fmt.Fprintf(w, "%s: largest answered %d bytes (every size tried was answered)\n", label, s.Largest)
	default:
		fmt.Fprintf(w, "%s: largest answered %d bytes; first failing %d bytes (%s)\n", label, s.Largest, s.FirstFailing, s.FailReason)
	}
	if explain {
		for _, st := range s.Steps {
			verdict := "answered"
			if !st.Answered {
				verdict = "failed: " + st.Reason
			}
			fmt.Fprintf(w, "  %-6s %5d bytes, %d tr%s: %s\n", st.Phase, st.Size, st.Tries, map[bool]string{true: "y", false: "ies"}[st.Tries == 1], verdict)
		}
	}
}
