package iperf3

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Errno is an iperf3 i_errno value as carried after SERVER_ERROR
// (iperf_api.h; numbers checked against esnet/iperf tags 3.12 and 3.21).
type Errno int32

// The i_errno values wirebench sends or interprets.
const (
	ErrnoNone           Errno = 0
	ErrnoDuration       Errno = 5   // test duration out of range (3.12: max 86400 s)
	ErrnoNumStreams     Errno = 6   // too many parallel streams (max 128)
	ErrnoBlockSize      Errno = 7   // block size too large
	ErrnoOmit           Errno = 12  // bogus --omit
	ErrnoUnimplemented  Errno = 13  // option not implemented
	ErrnoBurst          Errno = 15  // invalid burst count
	ErrnoEndConditions  Errno = 16  // more than one of -t, -n, -k
	ErrnoUDPBlockSize   Errno = 20  // UDP block size invalid
	ErrnoReverseBidir   Errno = 25  // both reverse and bidirectional
	ErrnoTotalRate      Errno = 27  // total bit rate above the server's limit (≥ 3.x, in 3.12)
	ErrnoMaxDuration    Errno = 37  // duration above the server's maximum (3.20+; older clients print "int_errno=37")
	ErrnoNewTest        Errno = 100 // unable to create a new test
	ErrnoInitTest       Errno = 101 // test initialization failed
	ErrnoRecvCookie     Errno = 106 // unable to receive the cookie
	ErrnoCtrlWrite      Errno = 107 // unable to write to the control socket
	ErrnoCtrlRead       Errno = 108 // unable to read from the control socket
	ErrnoCtrlClose      Errno = 109 // control socket closed unexpectedly
	ErrnoMessage        Errno = 110 // unknown control message
	ErrnoRecvParams     Errno = 114 // unable to receive parameters
	ErrnoPackageResults Errno = 115 // unable to package results
	ErrnoSendResults    Errno = 116 // unable to send results
	ErrnoRecvResults    Errno = 117 // unable to receive results
	ErrnoClientTerm     Errno = 119 // the client has terminated
	ErrnoServerTerm     Errno = 120 // the server has terminated
	ErrnoAccessDenied   Errno = 121 // the server is busy
	ErrnoProtocol       Errno = 131 // protocol does not exist
	ErrnoAuthTest       Errno = 142 // test authorization failed
	ErrnoNoMsg          Errno = 144 // idle timeout for receiving data
	ErrnoServerExpired  Errno = 160 // server test duration expired (3.21+)
	ErrnoCreateStream   Errno = 200 // unable to create a new stream
	ErrnoStreamConnect  Errno = 203 // unable to connect stream
	ErrnoStreamAccept   Errno = 204 // unable to accept stream connection
	ErrnoStreamWrite    Errno = 205 // unable to write to stream socket
	ErrnoStreamRead     Errno = 206 // unable to read from stream socket
	ErrnoStreamClose    Errno = 207 // stream socket closed unexpectedly
	ErrnoStreamID       Errno = 208 // stream has an invalid id
)

// String returns iperf3's message for e (lower-case, as iperf_strerror
// prints it), or "int_errno=N" like iperf3 for numbers not listed here.
func (e Errno) String() string {
	switch e {
	case ErrnoNone:
		return "no error"
	case ErrnoDuration:
		return "test duration valid values are 0 to 86400 seconds"
	case ErrnoNumStreams:
		return "invalid number of parallel streams (min = 1, max = 128)"
	case ErrnoBlockSize:
		return "block size too large"
	case ErrnoOmit:
		return "bogus value for --omit"
	case ErrnoUnimplemented:
		return "an option you are trying to set is not implemented yet"
	case ErrnoBurst:
		return "invalid burst count"
	case ErrnoEndConditions:
		return "only one test end condition (-t, -n, -k) may be specified"
	case ErrnoUDPBlockSize:
		return "block size invalid"
	case ErrnoReverseBidir:
		return "cannot be both reverse and bidirectional"
	case ErrnoTotalRate:
		return "total required bandwidth is larger than server limit"
	case ErrnoMaxDuration:
		return "client's requested duration exceeds the server's maximum permitted limit"
	case ErrnoNewTest:
		return "unable to create a new test"
	case ErrnoInitTest:
		return "test initialization failed"
	case ErrnoRecvCookie:
		return "unable to receive cookie at server"
	case ErrnoCtrlWrite:
		return "unable to write to the control socket"
	case ErrnoCtrlRead:
		return "unable to read from the control socket"
	case ErrnoCtrlClose:
		return "control socket has closed unexpectedly"
	case ErrnoMessage:
		return "received an unknown control message"
	case ErrnoRecvParams:
		return "unable to receive parameters from client"
	case ErrnoPackageResults:
		return "unable to package results"
	case ErrnoSendResults:
		return "unable to send results"
	case ErrnoRecvResults:
		return "unable to receive results"
	case ErrnoClientTerm:
		return "the client has terminated"
	case ErrnoServerTerm:
		return "the server has terminated"
	case ErrnoAccessDenied:
		return "the server is busy running a test. try again later"
	case ErrnoProtocol:
		return "protocol does not exist"
	case ErrnoAuthTest:
		return "test authorization failed"
	case ErrnoNoMsg:
		return "idle timeout for receiving data"
	case ErrnoServerExpired:
		return "server test duration expired"
	case ErrnoCreateStream:
		return "unable to create a new stream"
	case ErrnoStreamConnect:
		return "unable to connect stream"
	case ErrnoStreamAccept:
		return "unable to accept stream connection"
	case ErrnoStreamWrite:
		return "unable to write to stream socket"
	case ErrnoStreamRead:
		return "unable to read from stream socket"
	case ErrnoStreamClose:
		return "stream socket has closed unexpectedly"
	case ErrnoStreamID:
		return "stream has an invalid id"
	}
	return "int_errno=" + strconv.Itoa(int(e))
}

// ServerErrorSize is the length of a SERVER_ERROR message including the state
// byte: 0xFE, BE int32 i_errno, BE int32 errno.
const ServerErrorSize = 9

// ServerErr is the content of a SERVER_ERROR message. It is an error.
type ServerErr struct {
	IErrno Errno // iperf3's i_errno
	Errno  int32 // the server's C errno (0 when none, or when the peer sent only i_errno)
	// Text is the server's reason in its own words, when it sent one
	// (a wirebench server does; see AppendWire). iperf3 itself has no
	// way to say more than i_errno.
	Text string
}

// serverErrText is the JSON frame a wirebench server sends after the
// standard SERVER_ERROR bytes to say why in words.
type serverErrText struct {
	Error string `json:"wirebench_error"`
}

// maxServerErrText caps the reason frame a client reads.
const maxServerErrText = 4 << 10

// Error implements error.
func (e *ServerErr) Error() string {
	if e.Text != "" {
		return fmt.Sprintf("%s (iperf3 server error: %v, i_errno %d)", e.Text, e.IErrno, int32(e.IErrno))
	}
	if e.Errno != 0 {
		return fmt.Sprintf("iperf3 server error: %v (i_errno %d, errno %d)", e.IErrno, int32(e.IErrno), e.Errno)
	}
	return fmt.Sprintf("iperf3 server error: %v (i_errno %d)", e.IErrno, int32(e.IErrno))
}

// AppendWire appends the 9 wire bytes of e (state byte included) to b,
// and, when e has Text, one length-prefixed JSON frame
// {"wirebench_error": Text} after them. An iperf3 client reads the 9
// bytes, prints its message for i_errno and closes: the frame is never
// read. A wirebench client reads it (Conn.ReadServerErr) and so can show
// the server's reason, which i_errno alone cannot carry.
func (e *ServerErr) AppendWire(b []byte) []byte {
	b = append(b, ServerError.Byte())
	b = binary.BigEndian.AppendUint32(b, uint32(e.IErrno))
	b = binary.BigEndian.AppendUint32(b, uint32(e.Errno))
	if e.Text == "" {
		return b
	}
	text := e.Text
	if len(text) > maxServerErrText-64 {
		text = text[:maxServerErrText-64]
	}
	body, err := json.Marshal(serverErrText{Error: text})
	if err != nil {
		return b
	}
	b, _ = AppendJSONFrame(b, body)
	return b
}

// decodeServerErrText returns the reason in a frame body, or "".
func decodeServerErrText(body []byte) string {
	var t serverErrText
	if json.Unmarshal(body, &t) != nil {
		return ""
	}
	return t.Error
}

// DecodeServerErrBody decodes the bytes that follow a SERVER_ERROR state
// byte. iperf3's authentication-failure path sends only i_errno, so 4 bytes
// are accepted (errno 0); 8 bytes are the normal form.
func DecodeServerErrBody(b []byte) (*ServerErr, error) {
	switch len(b) {
	case 4:
		return &ServerErr{IErrno: Errno(int32(binary.BigEndian.Uint32(b)))}, nil
	case 8:
		return &ServerErr{
			IErrno: Errno(int32(binary.BigEndian.Uint32(b))),
			Errno:  int32(binary.BigEndian.Uint32(b[4:])),
		}, nil
	}
	return nil, fmt.Errorf("decoding iperf3 server error: %d bytes, want 4 or 8", len(b))
}

// readServerErrBody reads the body of a SERVER_ERROR from r, accepting a peer
// that closes after i_errno.
func readServerErrBody(r io.Reader) (*ServerErr, error) {
	var b [8]byte
	n, err := io.ReadFull(r, b[:])
	switch {
	case err == nil:
	case n == 4 && errors.Is(err, io.ErrUnexpectedEOF):
		return DecodeServerErrBody(b[:4])
	default:
		return nil, fmt.Errorf("reading iperf3 server error: %w", err)
	}
	return DecodeServerErrBody(b[:])
}
