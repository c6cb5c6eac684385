package iperf3

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// JSON framing on the control connection (wire-protocols.md §4.1):
//
//	0        4
//	+--------+------------------------------+
//	| len BE | len bytes of JSON, no NUL    |
//	+--------+------------------------------+
const (
	// MaxJSONLen is the default cap on a JSON message. A larger length
	// prefix is an error before anything is allocated.
	MaxJSONLen = 1 << 20
	// jsonChunk bounds each allocation while a JSON body arrives, so a
	// peer that announces a large length and sends little costs little.
	jsonChunk = 16 << 10
)

// ErrJSONTooLarge is wrapped when a length prefix exceeds the cap.
var ErrJSONTooLarge = errors.New("iperf3 json message too large")

// ErrInvalidJSON is wrapped when a JSON message does not parse.
var ErrInvalidJSON = errors.New("invalid iperf3 json")

// ReadJSONFrame reads one length-prefixed JSON message from r and returns its
// body. A length above max (MaxJSONLen when max ≤ 0) is an error and nothing
// is allocated for it; the body is read in bounded chunks. The body is checked
// to be valid JSON.
func ReadJSONFrame(r io.Reader, max int) ([]byte, error) {
	if max <= 0 {
		max = MaxJSONLen
	}
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("reading iperf3 json length: %w", err)
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if uint64(n) > uint64(max) {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrJSONTooLarge, n, max)
	}
	var buf bytes.Buffer
	for remaining := int64(n); remaining > 0; {
		step := min(remaining, jsonChunk)
		buf.Grow(int(step))
		got, err := io.CopyN(&buf, r, step)
		remaining -= got
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("reading iperf3 json body (%d of %d bytes): %w", int64(n)-remaining, n, err)
		}
	}
	body := buf.Bytes()
	if !json.Valid(body) {
		return nil, fmt.Errorf("%w: %d-byte message", ErrInvalidJSON, len(body))
	}
	return body, nil
}

// AppendJSONFrame appends the length prefix and body to b.
func AppendJSONFrame(b, body []byte) ([]byte, error) {
	if uint64(len(body)) > 1<<32-1 {
		return b, fmt.Errorf("%w: %d bytes", ErrJSONTooLarge, len(body))
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(body)))
	return append(b, body...), nil
}

// deadliner is the part of net.Conn that lets a blocked read or write be
// interrupted.
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// Conn reads and writes iperf3 control messages on rw, which is usually the
// control TCP connection. It opens no sockets itself.
//
// Every method takes a context. When rw has SetReadDeadline and
// SetWriteDeadline (as net.Conn does), the context's deadline becomes the I/O
// deadline and cancelling the context interrupts a blocked call, which then
// returns an error wrapping ctx.Err(); the connection should then be closed, as
// a message may be half-read. Without deadlines, the context is only checked
// before each call.
//
// One goroutine may read while another writes; two concurrent readers (or
// writers) are not allowed. Conn never closes rw.
type Conn struct {
	rw io.ReadWriter
	// MaxJSON caps incoming JSON messages; 0 means MaxJSONLen. Raise it
	// only for results that carry server_output_json of long tests.
	MaxJSON int
}

// NewConn wraps rw.
func NewConn(rw io.ReadWriter) *Conn { return &Conn{rw: rw} }

// io runs op under ctx: deadline from ctx, interruption on cancel.
func (c *Conn) io(ctx context.Context, write bool, op func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d, ok := c.rw.(deadliner)
	if !ok {
		return op()
	}
	set := d.SetReadDeadline
	if write {
		set = d.SetWriteDeadline
	}
	dl, _ := ctx.Deadline() // zero when none: no deadline
	if err := set(dl); err != nil {
		return fmt.Errorf("setting deadline: %w", err)
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		_ = set(time.Unix(1, 0)) // in the past: unblocks op
	})
	err := op()
	if !stop() {
		<-fired // the interrupt ran or is running; wait before clearing
	}
	_ = set(time.Time{})
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}

// ReadState reads one state byte. It does not validate it; use a Machine.
func (c *Conn) ReadState(ctx context.Context) (State, error) {
	var b [1]byte
	err := c.io(ctx, false, func() error {
		_, err := io.ReadFull(c.rw, b[:])
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("reading iperf3 state: %w", err)
	}
	return State(int8(b[0])), nil
}

// WriteState writes one state byte.
func (c *Conn) WriteState(ctx context.Context, s State) error {
	return c.write(ctx, "iperf3 state "+s.String(), []byte{s.Byte()})
}

// write writes b whole under ctx.
func (c *Conn) write(ctx context.Context, what string, b []byte) error {
	err := c.io(ctx, true, func() error {
		_, err := c.rw.Write(b)
		return err
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	return nil
}

// ReadCookie reads and validates the 37-byte cookie.
func (c *Conn) ReadCookie(ctx context.Context) (Cookie, error) {
	var b [CookieSize]byte
	err := c.io(ctx, false, func() error {
		_, err := io.ReadFull(c.rw, b[:])
		return err
	})
	if err != nil {
		return Cookie{}, fmt.Errorf("reading iperf3 cookie: %w", err)
	}
	return ParseCookie(b[:])
}

// WriteCookie writes the 37-byte cookie.
func (c *Conn) WriteCookie(ctx context.Context, ck Cookie) error {
	return c.write(ctx, "iperf3 cookie", ck.AppendWire(nil))
}

// ReadJSON reads one length-prefixed JSON message and returns its body.
func (c *Conn) ReadJSON(ctx context.Context) ([]byte, error) {
	var body []byte
	err := c.io(ctx, false, func() error {
		var err error
		body, err = ReadJSONFrame(c.rw, c.MaxJSON)
		return err
	})
	return body, err
}

// WriteJSON writes body (already-encoded JSON) with its length prefix, in one
// Write.
func (c *Conn) WriteJSON(ctx context.Context, body []byte) error {
	b, err := AppendJSONFrame(nil, body)
	if err != nil {
		return err
	}
	return c.write(ctx, "iperf3 json", b)
}

// ReadParams reads and decodes the client's parameter JSON.
func (c *Conn) ReadParams(ctx context.Context) (*Params, error) {
	body, err := c.ReadJSON(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading iperf3 parameters: %w", err)
	}
	return DecodeParams(body)
}

// WriteParams encodes and writes the parameter JSON.
func (c *Conn) WriteParams(ctx context.Context, p *Params) error {
	body, err := p.MarshalJSON()
	if err != nil {
		return err
	}
	return c.WriteJSON(ctx, body)
}

// ReadResults reads and decodes a results JSON.
func (c *Conn) ReadResults(ctx context.Context) (*Results, error) {
	body, err := c.ReadJSON(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading iperf3 results: %w", err)
	}
	return DecodeResults(body)
}

// WriteResults encodes and writes a results JSON.
func (c *Conn) WriteResults(ctx context.Context, r *Results) error {
	body, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	return c.WriteJSON(ctx, body)
}

// serverErrTextWait bounds the wait for a wirebench server's reason after
// SERVER_ERROR. The reason comes in the same write as the error, so it is
// there at once; an iperf3 server closes the connection (end of file at
// once). Only a peer that keeps the connection open and silent costs it.
const serverErrTextWait = time.Second

// ReadServerErr reads the 8 bytes that follow a SERVER_ERROR state byte
// (or 4, when the peer closes after i_errno), then the reason a wirebench
// server sends after them (ServerErr.AppendWire) into Text, when there is
// one.
func (c *Conn) ReadServerErr(ctx context.Context) (*ServerErr, error) {
	var e *ServerErr
	err := c.io(ctx, false, func() error {
		var err error
		e, err = readServerErrBody(c.rw)
		return err
	})
	if err != nil {
		return e, err
	}
	_, timed := c.rw.(deadliner)
	lr, sized := c.rw.(interface{ Len() int })
	if !timed && (!sized || lr.Len() == 0) {
		return e, nil // no way to bound a read of what may never come
	}
	tctx, cancel := context.WithTimeout(ctx, serverErrTextWait)
	defer cancel()
	_ = c.io(tctx, false, func() error {
		body, err := ReadJSONFrame(c.rw, maxServerErrText)
		if err == nil {
			e.Text = decodeServerErrText(body)
		}
		return err
	})
	return e, nil
}

// WriteServerErr writes SERVER_ERROR followed by i_errno and errno in one
// Write.
func (c *Conn) WriteServerErr(ctx context.Context, e *ServerErr) error {
	return c.write(ctx, "iperf3 server error", e.AppendWire(nil))
}
