package tcpinfo

import (
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// read asks the kernel for TCP_INFO and notes how much of the structure it
// filled: older kernels fill a shorter prefix, and the fields past it are
// absent rather than zero.
func read(fd uintptr) (Info, error) {
	var ti unix.TCPInfo
	n := uint32(unsafe.Sizeof(ti))
	_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.IPPROTO_TCP, unix.TCP_INFO,
		uintptr(unsafe.Pointer(&ti)), uintptr(unsafe.Pointer(&n)), 0)
	if errno != 0 {
		return Info{}, fmt.Errorf("reading tcp_info: %w", errno)
	}
	return fromKernel(&ti, uintptr(n)), nil
}

// fromKernel converts the first n bytes' worth of a kernel TCPInfo.
func fromKernel(ti *unix.TCPInfo, n uintptr) Info {
	covers := func(off, size uintptr) bool { return n >= off+size }
	info := Info{
		State:        ti.State,
		SndMSS:       ti.Snd_mss,
		AdvMSS:       ti.Advmss,
		PMTU:         ti.Pmtu,
		Cwnd:         ti.Snd_cwnd,
		RTT:          time.Duration(ti.Rtt) * time.Microsecond,
		RTTVar:       time.Duration(ti.Rttvar) * time.Microsecond,
		Unacked:      ti.Unacked,
		TotalRetrans: ti.Total_retrans,
	}
	if covers(unsafe.Offsetof(ti.Bytes_received), 8) {
		info.BytesAcked, info.BytesReceived, info.HasBytesAcked = ti.Bytes_acked, ti.Bytes_received, true
	}
	if covers(unsafe.Offsetof(ti.Min_rtt), 4) {
		info.NotSent, info.MinRTT, info.HasNotSent = ti.Notsent_bytes, time.Duration(ti.Min_rtt)*time.Microsecond, true
	}
	if covers(unsafe.Offsetof(ti.Bytes_retrans), 8) {
		info.BytesSent, info.BytesRetrans, info.HasBytesSent = ti.Bytes_sent, ti.Bytes_retrans, true
	}
	return info
}
