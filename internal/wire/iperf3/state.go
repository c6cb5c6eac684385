package iperf3

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// State is one iperf3 control-channel state byte: a signed char sent alone on
// the control connection (wire-protocols.md §4.1). Values 3, 5–8 and 15 are
// defined by iperf3 but never sent.
type State int8

// The iperf3 state bytes (iperf_api.h).
const (
	TestStart       State = 1  // S→C: streams are all connected
	TestRunning     State = 2  // S→C: data may flow
	ResultRequest   State = 3  // defined, unused
	TestEnd         State = 4  // C→S: the client ends the test (also in reverse mode)
	StreamBegin     State = 5  // defined, unused
	StreamRunning   State = 6  // defined, unused
	StreamEnd       State = 7  // defined, unused
	AllStreamsEnd   State = 8  // defined, unused
	ParamExchange   State = 9  // S→C: send the parameter JSON
	CreateStreams   State = 10 // S→C: open the data streams
	ServerTerminate State = 11 // S→C: the server was interrupted
	ClientTerminate State = 12 // C→S: the client was interrupted
	ExchangeResults State = 13 // S→C: exchange results JSON, client first
	DisplayResults  State = 14 // S→C: results are final
	IperfStart      State = 15 // defined, unused on the wire
	IperfDone       State = 16 // C→S: the client is finished; both close
	AccessDenied    State = -1 // S→C: busy, or a bad data-stream cookie; then close
	ServerError     State = -2 // S→C: followed by BE int32 i_errno and BE int32 errno
)

// name returns iperf3's name for s, or "" when iperf3 does not define it.
func (s State) name() string {
	switch s {
	case TestStart:
		return "TEST_START"
	case TestRunning:
		return "TEST_RUNNING"
	case ResultRequest:
		return "RESULT_REQUEST"
	case TestEnd:
		return "TEST_END"
	case StreamBegin:
		return "STREAM_BEGIN"
	case StreamRunning:
		return "STREAM_RUNNING"
	case StreamEnd:
		return "STREAM_END"
	case AllStreamsEnd:
		return "ALL_STREAMS_END"
	case ParamExchange:
		return "PARAM_EXCHANGE"
	case CreateStreams:
		return "CREATE_STREAMS"
	case ServerTerminate:
		return "SERVER_TERMINATE"
	case ClientTerminate:
		return "CLIENT_TERMINATE"
	case ExchangeResults:
		return "EXCHANGE_RESULTS"
	case DisplayResults:
		return "DISPLAY_RESULTS"
	case IperfStart:
		return "IPERF_START"
	case IperfDone:
		return "IPERF_DONE"
	case AccessDenied:
		return "ACCESS_DENIED"
	case ServerError:
		return "SERVER_ERROR"
	}
	return ""
}

// String returns iperf3's name for the state, or "STATE(n)" for a value iperf3
// does not define.
func (s State) String() string {
	if n := s.name(); n != "" {
		return n
	}
	return "STATE(" + strconv.Itoa(int(s)) + ")"
}

// Known reports whether iperf3 defines s (even if it is never sent).
func (s State) Known() bool {
	return s.name() != ""
}

// Byte returns the byte that carries s on the wire.
func (s State) Byte() byte { return byte(s) }

// Role is one end of an iperf3 control connection.
type Role uint8

// The two roles.
const (
	RoleClient Role = iota + 1
	RoleServer
)

// String returns "client" or "server".
func (r Role) String() string {
	switch r {
	case RoleClient:
		return "client"
	case RoleServer:
		return "server"
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

// Peer returns the other role.
func (r Role) Peer() Role {
	if r == RoleClient {
		return RoleServer
	}
	return RoleClient
}

// ErrUnknownState is wrapped by errors for state bytes iperf3 does not define.
var ErrUnknownState = errors.New("unknown iperf3 state byte")

// ErrUnexpectedState is wrapped by errors for known state bytes that are not
// allowed at this point of the conversation or from this sender.
var ErrUnexpectedState = errors.New("unexpected iperf3 state")

// ErrFinished is wrapped when a state arrives after the conversation ended.
var ErrFinished = errors.New("iperf3 conversation already finished")

// TransitionError describes a rejected state byte.
type TransitionError struct {
	Role   Role  // the role of the Machine that rejected it
	Sender Role  // who sent (or wanted to send) the state
	From   State // the last accepted state (0 before the first one)
	To     State // the rejected state
	Err    error // ErrUnknownState, ErrUnexpectedState or ErrFinished
}

// Error implements error.
func (e *TransitionError) Error() string {
	from := "start"
	if e.From != 0 {
		from = e.From.String()
	}
	return fmt.Sprintf("iperf3 %s: %s from %s after %s: %v", e.Role, e.To, e.Sender, from, e.Err)
}

// Unwrap returns the sentinel error.
func (e *TransitionError) Unwrap() error { return e.Err }

// Machine tracks the control conversation of one iperf3 test, seen from one
// role, and rejects state bytes that are unknown, out of order or sent by the
// wrong side. Both roles use the same transition table; a Machine only knows
// which of the two it is. The zero State (no state yet) is the start.
//
//	                      client                     server
//	  start  ──cookie (37 bytes)──────────────────────────▶
//	         ◀───────────────── PARAM_EXCHANGE ────────────  (or ACCESS_DENIED: end)
//	  PARAM_EXCHANGE ──u32 len + params JSON──────────────▶
//	         ◀───────────────── CREATE_STREAMS ────────────  (or SERVER_ERROR: end)
//	  CREATE_STREAMS ──data streams: cookie / UDP "9876"──▶
//	         ◀───────────────── TEST_START ────────────────
//	         ◀───────────────── TEST_RUNNING ──────────────
//	  TEST_RUNNING   ·········· data ··········
//	         ──── TEST_END ───────────────────────────────▶
//	         ◀───────────────── EXCHANGE_RESULTS ──────────
//	  EXCHANGE_RESULTS ─u32 len + client results JSON─────▶
//	         ◀──────────────── u32 len + server results JSON
//	         ◀───────────────── DISPLAY_RESULTS ───────────
//	         ──── IPERF_DONE ─────────────────────────────▶  end; both close
//
//	From any state before the end:
//	  SERVER_ERROR (S→C, + i_errno, errno), SERVER_TERMINATE (S→C),
//	  CLIENT_TERMINATE (C→S) end the conversation.
//	  ACCESS_DENIED (S→C) may also replace PARAM_EXCHANGE or CREATE_STREAMS
//	  (busy server, failed authentication).
//	Tolerated without a transition: TEST_START sent by a client (3.12 servers
//	ignore it).
//
// A Machine is safe for concurrent use: a client's reader goroutine may
// record the server's states while its main goroutine records its own.
type Machine struct {
	role Role
	mu   sync.Mutex // guards last and done
	last State
	done bool
}

// NewMachine returns a Machine at the start of a conversation for role.
func NewMachine(role Role) *Machine { return &Machine{role: role} }

// Role returns the role the Machine was made for.
func (m *Machine) Role() Role { return m.role }

// State returns the last accepted state (0 before the first).
func (m *Machine) State() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

// Done reports whether the conversation has ended (IPERF_DONE, an error or a
// termination state).
func (m *Machine) Done() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.done
}

// Send checks that this role may send s now and records it.
func (m *Machine) Send(s State) error { return m.Step(m.role, s) }

// Recv checks that the peer may send s now and records it.
func (m *Machine) Recv(s State) error { return m.Step(m.role.Peer(), s) }

// Step validates state s sent by sender and advances. On error the Machine
// does not change.
func (m *Machine) Step(sender Role, s State) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	fail := func(err error) error {
		return &TransitionError{Role: m.role, Sender: sender, From: m.last, To: s, Err: err}
	}
	if !s.Known() {
		return fail(ErrUnknownState)
	}
	if m.done {
		return fail(ErrFinished)
	}
	if sender == RoleClient && s == TestStart {
		return nil // tolerated no-op
	}
	if stateSender(s) != sender || !allowedAfter(m.last, s) {
		return fail(ErrUnexpectedState)
	}
	m.last = s
	m.done = terminal(s)
	return nil
}

// stateSender returns the only role that ever sends s (0 for unused states).
func stateSender(s State) Role {
	switch s {
	case TestEnd, ClientTerminate, IperfDone:
		return RoleClient
	case ParamExchange, CreateStreams, TestStart, TestRunning, ExchangeResults,
		DisplayResults, ServerTerminate, AccessDenied, ServerError:
		return RoleServer
	}
	return 0
}

// terminal reports whether s ends the conversation.
func terminal(s State) bool {
	switch s {
	case IperfDone, AccessDenied, ServerError, ServerTerminate, ClientTerminate:
		return true
	}
	return false
}

// mainNext is the main line of the conversation: the state that follows
// last, or 0 when nothing does.
func mainNext(last State) State {
	switch last {
	case 0:
		return ParamExchange
	case ParamExchange:
		return CreateStreams
	case CreateStreams:
		return TestStart
	case TestStart:
		return TestRunning
	case TestRunning:
		return TestEnd
	case TestEnd:
		return ExchangeResults
	case ExchangeResults:
		return DisplayResults
	case DisplayResults:
		return IperfDone
	}
	return 0
}

// allowedAfter reports whether s may follow last (last is not terminal).
func allowedAfter(last, s State) bool {
	switch s {
	case ServerError, ServerTerminate, ClientTerminate:
		return true
	case AccessDenied:
		return last == 0 || last == ParamExchange || last == CreateStreams
	}
	return mainNext(last) == s
}
