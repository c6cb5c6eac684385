package result

import "net"

// KindReassembly is the "kind" of the ping reassembly probe's document
// (ReassemblyDoc).
const KindReassembly = "reassembly-probe"

// Reassembly is what the ping reassembly probe found: the largest payload
// the target answers, without and with don't-fragment.
type Reassembly struct {
	Target    string      `json:"target"`
	Address   net.IP      `json:"address"`
	Socket    PingSocket  `json:"socket"`
	PathMTU   int         `json:"path_mtu,omitempty"`
	Tries     int         `json:"tries"`
	Timeout   float64     `json:"timeout_s"`
	WithoutDF PingSearch  `json:"without_df"`
	WithDF    *PingSearch `json:"with_df,omitempty"`
	// DFError says why the DF search was not made.
	DFError string `json:"df_error,omitempty"`
	Error   string `json:"error,omitempty"`
}

// ReassemblyDoc is the reassembly probe's document (KindReassembly).
type ReassemblyDoc struct {
	Schema string `json:"schema"`
	Kind   string `json:"kind"`
	*Reassembly
}

// PingSearch is what one search for the largest answered payload found.
type PingSearch struct {
	// Largest is the largest payload answered; -1 when none was.
	Largest int `json:"largest_answered"`
	// FirstFailing is the smallest payload not answered, always Largest+1
	// after a complete search; 0 when every size tried was answered.
	FirstFailing int `json:"first_failing"`
	// FailReason is the reason given for FirstFailing.
	FailReason string           `json:"fail_reason,omitempty"`
	Steps      []PingSearchStep `json:"steps"`
	// Incomplete is set when the context ended before the search did.
	Incomplete bool `json:"incomplete,omitempty"`
}

// PingSearchStep is one size a search tried.
type PingSearchStep struct {
	Size     int    `json:"size"`
	Answered bool   `json:"answered"`
	Tries    int    `json:"tries"`
	Reason   string `json:"reason,omitempty"`
	Phase    string `json:"phase"` // "ladder" or "bisect"
}
