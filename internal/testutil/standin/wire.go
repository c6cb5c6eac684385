package standin

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"
)

// Wire constants from §1.2, §1.3 and §1.5.
const (
	flagVersion1 = 0x80000000 // HEADER_VERSION1: connect back (-r / -d)
	flagRunNow   = 0x00000001 // RUN_NOW: with VERSION1, -d

	legacyHdrLen   = 12 // id, tv_sec, tv_usec
	modernHdrLen   = 16 // + id2
	clientHdrV1Len = 24
	serverHdrLen   = 40
	tcpChunk       = 128 * 1024 // 2.0.5 default TCP write size (§2.1, §5.2)

	defaultUDPLen   = 1470
	defaultMaxPkts  = 1 << 20
	defaultRateBps  = 1_000_000
	maxDatagramRead = 65536
)

// ClientHdrV1 is the 24-byte client_hdr_v1 of §1.2.
type ClientHdrV1 struct {
	Flags      uint32
	NumThreads uint32
	MPort      uint32
	BufLen     uint32
	WinBand    uint32
	Amount     int32
}

func (h ClientHdrV1) put(b []byte) {
	binary.BigEndian.PutUint32(b[0:], h.Flags)
	binary.BigEndian.PutUint32(b[4:], h.NumThreads)
	binary.BigEndian.PutUint32(b[8:], h.MPort)
	binary.BigEndian.PutUint32(b[12:], h.BufLen)
	binary.BigEndian.PutUint32(b[16:], h.WinBand)
	binary.BigEndian.PutUint32(b[20:], uint32(h.Amount))
}

// Bytes returns the 24 wire bytes of h.
func (h ClientHdrV1) Bytes() []byte {
	b := make([]byte, clientHdrV1Len)
	h.put(b)
	return b
}

// ParseClientHdrV1 decodes the first 24 bytes of b (§1.2).
func ParseClientHdrV1(b []byte) (ClientHdrV1, error) {
	if len(b) < clientHdrV1Len {
		return ClientHdrV1{}, fmt.Errorf("parse client_hdr_v1: %d bytes, need %d", len(b), clientHdrV1Len)
	}
	return ClientHdrV1{
		Flags:      binary.BigEndian.Uint32(b[0:]),
		NumThreads: binary.BigEndian.Uint32(b[4:]),
		MPort:      binary.BigEndian.Uint32(b[8:]),
		BufLen:     binary.BigEndian.Uint32(b[12:]),
		WinBand:    binary.BigEndian.Uint32(b[16:]),
		Amount:     int32(binary.BigEndian.Uint32(b[20:])),
	}, nil
}

// ServerReport is the 40-byte server_hdr of §1.5 ("AckFIN"), as raw words.
type ServerReport struct {
	Flags       uint32
	TotalLen1   uint32
	TotalLen2   uint32
	StopSec     uint32
	StopUsec    uint32
	ErrorCnt    int32
	OutOrderCnt int32
	Datagrams   int32
	Jitter1     uint32
	Jitter2     uint32
}

// TotalLen returns total_len1<<32 + total_len2.
func (r ServerReport) TotalLen() uint64 { return uint64(r.TotalLen1)<<32 + uint64(r.TotalLen2) }

func (r ServerReport) put(b []byte) {
	for i, w := range []uint32{r.Flags, r.TotalLen1, r.TotalLen2, r.StopSec, r.StopUsec,
		uint32(r.ErrorCnt), uint32(r.OutOrderCnt), uint32(r.Datagrams), r.Jitter1, r.Jitter2} {
		binary.BigEndian.PutUint32(b[4*i:], w)
	}
}

// ParseServerReport decodes the 40 bytes of b starting at off (12 for the
// legacy layout, 16 for the modern one; §1.5).
func ParseServerReport(b []byte, off int) (ServerReport, error) {
	if off < 0 || len(b) < off+serverHdrLen {
		return ServerReport{}, fmt.Errorf("parse server report at %d: %d bytes, need %d", off, len(b), off+serverHdrLen)
	}
	w := func(i int) uint32 { return binary.BigEndian.Uint32(b[off+4*i:]) }
	return ServerReport{
		Flags: w(0), TotalLen1: w(1), TotalLen2: w(2), StopSec: w(3), StopUsec: w(4),
		ErrorCnt: int32(w(5)), OutOrderCnt: int32(w(6)), Datagrams: int32(w(7)),
		Jitter1: w(8), Jitter2: w(9),
	}, nil
}

// amountField encodes mAmount (§1.2): negative duration in 10 ms units, or a
// byte count masked to 31 bits.
func amountField(d time.Duration, bytes int64) int32 {
	if bytes > 0 {
		return int32(bytes & 0x7fffffff)
	}
	return -int32(d / (10 * time.Millisecond))
}

// putStamp writes id (int32 view) and a timestamp into a datagram header.
func putStamp(b []byte, id int32, sec, usec uint32) {
	binary.BigEndian.PutUint32(b[0:], uint32(id))
	binary.BigEndian.PutUint32(b[4:], sec)
	binary.BigEndian.PutUint32(b[8:], usec)
}

// wallStamp splits t into (sec, usec) words as gettimeofday gives them.
func wallStamp(t time.Time) (uint32, uint32) {
	return uint32(t.Unix()), uint32(t.Nanosecond() / 1000)
}

// digitPattern fills b with the iperf "0123456789…" pattern, byte i being
// '0' + (off+i)%10.
func digitPattern(b []byte, off int) {
	for i := range b {
		b[i] = byte('0' + (off+i)%10)
	}
}

// errNoDeadline is returned when a stand-in is given a context without a
// deadline: every stand-in loop must be bounded in time.
var errNoDeadline = errors.New("context has no deadline")

func needDeadline(ctx context.Context) (time.Time, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		return time.Time{}, errNoDeadline
	}
	return dl, nil
}

// closeOnDone closes c when ctx ends, so that blocked reads return; the
// returned func stops the watcher.
func closeOnDone(ctx context.Context, c interface{ Close() error }) func() {
	stop := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = c.Close()
		case <-stop:
		}
	}()
	return func() { close(stop) }
}

// sleepUntil waits until t or ctx end; it reports false if ctx ended.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// isTimeout reports whether err is a read-deadline expiry.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Server is a running stand-in server. It is safe for concurrent use.
type Server[T any] struct {
	addr net.Addr
	done chan struct{}
	res  T
	err  error
}

// Addr returns the address the server is bound to.
func (s *Server[T]) Addr() net.Addr { return s.addr }

// Wait blocks until the server has finished (session complete or context
// ended) and returns what it observed. A non-nil error comes with the partial
// result gathered so far.
func (s *Server[T]) Wait() (T, error) {
	<-s.done
	return s.res, s.err
}

func startServer[T any](addr net.Addr, run func() (T, error)) *Server[T] {
	s := &Server[T]{addr: addr, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.res, s.err = run()
	}()
	return s
}
