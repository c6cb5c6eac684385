package tcpinfo

import (
	"io"
	"net"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestReadLoopback sends a known number of bytes over loopback and checks
// that the kernel's acknowledged and received counts match them exactly.
func TestReadLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const size = 3 << 20
	got := make(chan *net.TCPConn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		_, _ = io.Copy(io.Discard, c)
		got <- c.(*net.TCPConn)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	srv := <-got
	if srv == nil {
		t.Fatal("accept failed")
	}
	defer srv.Close()

	// The acknowledgement of the last bytes may trail the receiver's read.
	var info Info
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err = Read(c.(*net.TCPConn))
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := info.PayloadAcked(); n >= size || info.State == stateFinWait2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !info.HasBytesAcked {
		t.Skip("this kernel does not report tcpi_bytes_acked")
	}
	if n, _ := info.PayloadAcked(); n != size || info.BytesAcked != size+2 {
		t.Errorf("payload acked = %d (sequence space %d, state %d), want %d (%d with SYN and FIN)",
			n, info.BytesAcked, info.State, size, size+2)
	}
	rinfo, err := Read(srv)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := rinfo.PayloadReceived(); n != size || rinfo.BytesReceived != size+1 {
		t.Errorf("payload received = %d (sequence space %d, state %d), want %d (%d with FIN)",
			n, rinfo.BytesReceived, rinfo.State, size, size+1)
	}
	if info.SndMSS == 0 || info.Cwnd == 0 || info.RTT <= 0 {
		t.Errorf("mss %d, cwnd %d, rtt %v: want all set on an established connection", info.SndMSS, info.Cwnd, info.RTT)
	}
	if info.TotalRetrans != 0 {
		t.Logf("%d retransmissions on loopback", info.TotalRetrans)
	}
}

// TestShortKernelStruct checks that fields beyond what an old kernel
// filled are marked absent, not read as zero.
func TestShortKernelStruct(t *testing.T) {
	ti := unix.TCPInfo{Snd_mss: 1448, Bytes_acked: 7, Notsent_bytes: 3, Bytes_sent: 9}
	old := fromKernel(&ti, unsafe.Offsetof(ti.Pacing_rate)) // Linux 3.x length
	if old.HasBytesAcked || old.HasNotSent || old.HasBytesSent || old.SndMSS != 1448 {
		t.Errorf("short struct: %+v", old)
	}
	mid := fromKernel(&ti, unsafe.Offsetof(ti.Notsent_bytes)) // up to segs_in
	if !mid.HasBytesAcked || mid.BytesAcked != 7 || mid.HasNotSent {
		t.Errorf("4.1-length struct: %+v", mid)
	}
	full := fromKernel(&ti, unsafe.Sizeof(ti))
	if !full.HasBytesSent || full.BytesSent != 9 || !full.HasNotSent || full.NotSent != 3 {
		t.Errorf("full struct: %+v", full)
	}
}

// TestReadNotTCP reports an error for a socket that is not TCP.
func TestReadNotTCP(t *testing.T) {
	u, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if _, err := Read(u.(*net.UDPConn)); err == nil {
		t.Error("tcp_info on a UDP socket: no error")
	}
}

// TestPayloadCounts checks the SYN and FIN corrections per state.
func TestPayloadCounts(t *testing.T) {
	for _, c := range []struct {
		state        uint8
		acked, rcvd  uint64
		wantA, wantR uint64
	}{
		{stateEstablished, 101, 100, 100, 100},
		{stateFinWait2, 102, 100, 100, 100},
		{stateTimeWait, 102, 101, 100, 100},
		{stateCloseWait, 101, 101, 100, 100},
		{stateLastAck, 101, 101, 100, 100},
	} {
		i := Info{State: c.state, BytesAcked: c.acked, BytesReceived: c.rcvd, HasBytesAcked: true}
		a, ok1 := i.PayloadAcked()
		r, ok2 := i.PayloadReceived()
		if !ok1 || !ok2 || a != c.wantA || r != c.wantR {
			t.Errorf("state %d: acked %d received %d, want %d %d", c.state, a, r, c.wantA, c.wantR)
		}
	}
	if _, ok := (Info{}).PayloadAcked(); ok {
		t.Error("absent bytes_acked reported as present")
	}
}
