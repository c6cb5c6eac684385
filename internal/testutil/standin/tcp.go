package standin

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// TCPClientOptions configures a TCP stand-in client.
type TCPClientOptions struct {
	// Duration bounds the send phase (default 1 s) unless Bytes is set.
	Duration time.Duration
	// Bytes, when > 0, is the number of data bytes to send (-n).
	Bytes int64
	// WriteLen is the size of each data write (dialect default if 0).
	WriteLen int
	// Tradeoff (-r) and Dual (-d) request the legacy connect-back (§3);
	// only Legacy205TCPClient and LwiperfTCPClient support them.
	Tradeoff, Dual bool
	// ListenPort is the 2.0.5 client's connect-back port (0: ephemeral);
	// it is sent as mPort.
	ListenPort int
	// MPort is the lwiperf client's mPort and connect-back port (default
	// 5001, §5.2).
	MPort int
	// Amount is the lwiperf client's mAmount (default −1000 = 10 s, §5.2).
	Amount int32
	// CallbackWait bounds the wait for the connect-back after the send
	// phase (default 5 s; the context bounds it too).
	CallbackWait time.Duration
	// MaxWrites caps the data writes (default 1<<20).
	MaxWrites int64
}

// TCPClientResult is what a TCP stand-in client sent and observed.
type TCPClientResult struct {
	Dialect    string
	Local      net.Addr
	Remote     net.Addr
	Header     []byte // the header sent first (nil for header-less dialects)
	Writes     int64  // data writes completed (header writes excluded)
	BytesSent  int64  // every byte written, header writes included
	FirstBytes []byte // the first up-to-128 bytes of the stream
	BackBytes  int64  // bytes the server sent on the test connection
	SendErr    error  // write error that ended the send phase, if any

	// Connect-back (-r / -d): the connection the server opened to us.
	CallbackPeer  net.Addr
	CallbackBytes int64
	CallbackFirst []byte // first up-to-128 bytes received on it
	CallbackErr   error
}

func (o TCPClientOptions) withDefaults(writeLen int) TCPClientOptions {
	if o.Duration == 0 && o.Bytes == 0 {
		o.Duration = time.Second
	}
	if o.WriteLen == 0 {
		o.WriteLen = writeLen
	}
	if o.MPort == 0 {
		o.MPort = 5001
	}
	if o.Amount == 0 {
		o.Amount = -1000
	}
	if o.CallbackWait == 0 {
		o.CallbackWait = 5 * time.Second
	}
	if o.MaxWrites == 0 {
		o.MaxWrites = defaultMaxPkts
	}
	return o
}

// tcpClient is one TCP stand-in client run.
type tcpClient struct {
	ctx  context.Context
	name string
	o    TCPClientOptions
	conn net.Conn
	res  TCPClientResult
}

func dialTCP(ctx context.Context, name, addr string) (*tcpClient, error) {
	if _, err := needDeadline(ctx); err != nil {
		return nil, fmt.Errorf("%s client: %w", name, err)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s client: dial %s: %w", name, addr, err)
	}
	c := &tcpClient{ctx: ctx, name: name, conn: conn}
	c.res = TCPClientResult{Dialect: name, Local: conn.LocalAddr(), Remote: conn.RemoteAddr()}
	return c, nil
}

// write writes b fully and records it.
func (c *tcpClient) write(b []byte) error {
	if len(c.res.FirstBytes) < 128 {
		c.res.FirstBytes = append(c.res.FirstBytes, b[:min(len(b), 128-len(c.res.FirstBytes))]...)
	}
	n, err := c.conn.Write(b)
	c.res.BytesSent += int64(n)
	if err != nil {
		return fmt.Errorf("%s client: write: %w", c.name, err)
	}
	return nil
}

// sendData makes writes from next(i, streamOffset) until the duration or byte
// budget is spent; the last write of a byte budget is cut short.
func (c *tcpClient) sendData(next func(i, off int64) []byte) {
	end := time.Now().Add(c.o.Duration)
	var data int64
	for i := int64(0); i < c.o.MaxWrites; i++ {
		if c.ctx.Err() != nil {
			c.res.SendErr = c.ctx.Err()
			return
		}
		if c.o.Bytes > 0 && data >= c.o.Bytes || c.o.Bytes == 0 && !time.Now().Before(end) {
			return
		}
		b := next(i, c.res.BytesSent)
		if c.o.Bytes > 0 {
			b = b[:min(int64(len(b)), c.o.Bytes-data)]
		}
		_ = c.conn.SetWriteDeadline(end.Add(time.Second))
		if err := c.write(b); err != nil {
			c.res.SendErr = err
			return
		}
		data += int64(len(b))
		c.res.Writes++
	}
}

// drain counts what the server sends back on the test connection.
func (c *tcpClient) drain() func() {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n, _ := io.Copy(io.Discard, c.conn)
		c.res.BackBytes = n
	}()
	return wg.Wait
}

// finish closes the test connection and waits for the drain.
func (c *tcpClient) finish(waitDrain func()) {
	if tc, ok := c.conn.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	waitDrain()
	_ = c.conn.Close()
}

// callback accepts one connect-back connection on ln (from remoteIP only)
// and counts its bytes until EOF.
type callback struct {
	ln   net.Listener
	done chan struct{}
	peer net.Addr
	n    int64
	head []byte
	err  error
}

func listenCallback(ip string, port int) (*callback, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("listen for connect-back: %w", err)
	}
	return &callback{ln: ln, done: make(chan struct{})}, nil
}

func (cb *callback) port() int { return cb.ln.Addr().(*net.TCPAddr).Port }

func (cb *callback) run(ctx context.Context, remoteIP string) {
	defer close(cb.done)
	defer cb.ln.Close()
	stop := closeOnDone(ctx, cb.ln)
	defer stop()
	for i := 0; i < 16; i++ { // lwiperf/2.0.5 accept only the server's address
		conn, err := cb.ln.Accept()
		if err != nil {
			cb.err = fmt.Errorf("accept connect-back: %w", err)
			return
		}
		if host, _, _ := net.SplitHostPort(conn.RemoteAddr().String()); host != remoteIP {
			_ = conn.Close()
			continue
		}
		cb.peer = conn.RemoteAddr()
		stopConn := closeOnDone(ctx, conn)
		cb.n, cb.head, cb.err = countStream(conn, 128)
		stopConn()
		_ = conn.Close()
		return
	}
}

// wait waits up to d for the connect-back to finish and stores it in res.
func (cb *callback) wait(d time.Duration, res *TCPClientResult) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-cb.done:
	case <-t.C:
		_ = cb.ln.Close()
		<-cb.done
	}
	res.CallbackPeer, res.CallbackBytes, res.CallbackFirst, res.CallbackErr = cb.peer, cb.n, cb.head, cb.err
}

// countStream reads r to EOF, returning the byte count and the first keep
// bytes.
func countStream(r io.Reader, keep int) (int64, []byte, error) {
	buf := make([]byte, 64*1024)
	var n int64
	var head []byte
	for {
		k, err := r.Read(buf)
		if len(head) < keep {
			head = append(head, buf[:min(k, keep-len(head))]...)
		}
		n += int64(k)
		if errors.Is(err, io.EOF) {
			return n, head, nil
		}
		if err != nil {
			return n, head, fmt.Errorf("read: %w", err)
		}
	}
}

func localIP(c net.Conn) string {
	host, _, _ := net.SplitHostPort(c.LocalAddr().String())
	return host
}

func remoteIP(c net.Conn) string {
	host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
	return host
}

// legacyFlags gives the v1 flags for -r / -d (§1.3, §2.1).
func legacyFlags(tradeoff, dual bool) uint32 {
	switch {
	case dual:
		return flagVersion1 | flagRunNow
	case tradeoff:
		return flagVersion1
	}
	return 0
}

// Legacy205TCPClient emulates an iperf 2.0.5 TCP client (§2.1, §3): the
// 24-byte client_hdr_v1 as its own write (flags 0, 0x80000000 for -r,
// 0x80000001 for -d; mPort = the connect-back port; mAmount from the
// duration or byte count), then writes of WriteLen (default 128 KiB) that
// each start with the same 24 bytes followed by the digit pattern. For -r/-d
// it listens on mPort first and counts the server's connect-back stream.
func Legacy205TCPClient(ctx context.Context, addr string, o TCPClientOptions) (TCPClientResult, error) {
	o = o.withDefaults(tcpChunk)
	c, err := dialTCP(ctx, "iperf-2.0.5", addr)
	if err != nil {
		return TCPClientResult{Dialect: "iperf-2.0.5"}, err
	}
	defer c.conn.Close()
	c.o = o
	var cb *callback
	mport := c.conn.RemoteAddr().(*net.TCPAddr).Port
	if o.Tradeoff || o.Dual {
		if cb, err = listenCallback(localIP(c.conn), o.ListenPort); err != nil {
			return c.res, fmt.Errorf("iperf-2.0.5 client: %w", err)
		}
		mport = cb.port()
		go cb.run(ctx, remoteIP(c.conn))
	}
	h := ClientHdrV1{Flags: legacyFlags(o.Tradeoff, o.Dual), NumThreads: 1, MPort: uint32(mport),
		Amount: amountField(o.Duration, o.Bytes)}
	if o.WriteLen != tcpChunk {
		h.BufLen = uint32(o.WriteLen)
	}
	c.res.Header = h.Bytes()
	wait := c.drain()
	if err := c.write(c.res.Header); err != nil {
		c.res.SendErr = err
	} else {
		buf := make([]byte, o.WriteLen)
		digitPattern(buf, 0)
		copy(buf, c.res.Header)
		c.sendData(func(int64, int64) []byte { return buf })
	}
	c.finish(wait)
	if cb != nil {
		cb.wait(o.CallbackWait, &c.res)
	}
	return c.res, nil
}

// LwiperfTCPClient emulates the lwIP lwiperf TCP client (§2.1, §5.2, [S]
// lwiperf.c): flags 0, 0x80000001 (Dual) or 0x80000000 (Tradeoff),
// numThreads 1, mPort = MPort (default 5001), mAmount = Amount (default
// −1000); the 24-byte header is sent twice, then the digit pattern (byte at
// stream offset i is '0'+i%10) in WriteLen writes (default 1460, the first
// one 24 bytes shorter). A time amount ends the run after −Amount×10 ms; a
// byte amount ends it at once (lwiperf's "amount >= bytes_transferred"
// test, [S]). For Dual/Tradeoff it listens on MPort for the connect-back
// from the same remote IP.
func LwiperfTCPClient(ctx context.Context, addr string, o TCPClientOptions) (TCPClientResult, error) {
	o = o.withDefaults(1460)
	var cb *callback
	if o.Tradeoff || o.Dual {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return TCPClientResult{Dialect: "lwiperf"}, fmt.Errorf("lwiperf client: %w", err)
		}
		if cb, err = listenCallback(host, o.MPort); err != nil {
			return TCPClientResult{Dialect: "lwiperf"}, fmt.Errorf("lwiperf client: %w", err)
		}
	}
	c, err := dialTCP(ctx, "lwiperf", addr)
	if err != nil {
		if cb != nil {
			_ = cb.ln.Close()
		}
		return TCPClientResult{Dialect: "lwiperf"}, err
	}
	defer c.conn.Close()
	if cb != nil {
		go cb.run(ctx, remoteIP(c.conn))
	}
	h := ClientHdrV1{Flags: legacyFlags(o.Tradeoff, o.Dual), NumThreads: 1, MPort: uint32(o.MPort), Amount: o.Amount}
	c.res.Header = h.Bytes()
	o.Bytes = 0
	o.Duration = 0
	if o.Amount < 0 {
		o.Duration = time.Duration(-int64(o.Amount)) * 10 * time.Millisecond
	}
	c.o = o
	wait := c.drain()
	if o.Duration > 0 {
		if err := c.write(c.res.Header); err == nil {
			err = c.write(c.res.Header)
			if err != nil {
				c.res.SendErr = err
			}
		} else {
			c.res.SendErr = err
		}
		buf := make([]byte, o.WriteLen+10)
		if c.res.SendErr == nil {
			c.sendData(func(i, off int64) []byte {
				n := o.WriteLen
				if i == 0 {
					n -= clientHdrV1Len
				}
				digitPattern(buf[:n], int(off%10))
				return buf[:n]
			})
		}
	}
	c.finish(wait)
	if cb != nil {
		cb.wait(o.CallbackWait, &c.res)
	}
	return c.res, nil
}

// ZperfTCPClient emulates the Zephyr zperf TCP uploader (§2.1, §5.1): no
// header; every write (default 256 bytes) has its first 4 bytes 0 and the
// rest 'z'.
func ZperfTCPClient(ctx context.Context, addr string, o TCPClientOptions) (TCPClientResult, error) {
	o = o.withDefaults(256)
	c, err := dialTCP(ctx, "zperf", addr)
	if err != nil {
		return TCPClientResult{Dialect: "zperf"}, err
	}
	defer c.conn.Close()
	c.o = o
	buf := make([]byte, max(o.WriteLen, 4))
	for i := 4; i < len(buf); i++ {
		buf[i] = 'z'
	}
	wait := c.drain()
	c.sendData(func(int64, int64) []byte { return buf })
	c.finish(wait)
	return c.res, nil
}

// ESPTCPClient emulates the ESP-IDF iperf TCP client (§2.1, §5.3): no header;
// zero-filled writes (default 16384 bytes) carrying a 32-bit big-endian
// counter, starting at 0, in their first 4 bytes [I: byte order].
func ESPTCPClient(ctx context.Context, addr string, o TCPClientOptions) (TCPClientResult, error) {
	o = o.withDefaults(16384)
	c, err := dialTCP(ctx, "esp-idf", addr)
	if err != nil {
		return TCPClientResult{Dialect: "esp-idf"}, err
	}
	defer c.conn.Close()
	c.o = o
	buf := make([]byte, max(o.WriteLen, 4))
	wait := c.drain()
	c.sendData(func(i, _ int64) []byte {
		binary.BigEndian.PutUint32(buf, uint32(i))
		return buf
	})
	c.finish(wait)
	return c.res, nil
}
