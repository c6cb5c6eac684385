package ping

import (
	"net"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// finish computes the loss and RTT summary from the counts and samples.
func finish(s *result.PingSize) {
	if s.Sent > 0 {
		s.LossPct = 100 * float64(s.Sent-s.Received) / float64(s.Sent)
	}
	s.RTT = Summarize(s.Samples)
}

// Event is one probe's outcome, reported as it happens.
type Event struct {
	Outcome Outcome
	Seq     int
	Size    int
	RTT     time.Duration // for replies, late replies, duplicates
	From    net.IP
	PathMTU int   // for OutcomeTooBig
	Err     error // for OutcomeSendError
	Kernel  bool  // RTT measured with a kernel receive timestamp
	// KernelTx: RTT measured from the kernel's transmit timestamp.
	KernelTx bool
	// CallRTT is the round trip from right before the send call, as
	// iputils ping times it; equal to RTT when KernelTx is false.
	CallRTT time.Duration
}
