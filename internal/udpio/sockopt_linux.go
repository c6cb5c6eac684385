package udpio

import (
	"encoding/binary"
	"fmt"
	"net"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// oobSpace is the control message buffer per datagram: SCM_TIMESTAMPNS
// (CmsgSpace(16) = 32 on 64-bit) + SO_RXQ_OVFL (CmsgSpace(4) = 24) + a
// UDP_GRO segment size (CmsgSpace(4) = 24), with room to spare.
const oobSpace = 128

// platformState is the Linux-only part of a Conn.
type platformState struct {
	meminfo bool // getsockopt(SO_MEMINFO) reports SK_MEMINFO_DROPS
}

// socketDrops reads the socket's current drop count (sk_drops) with
// SO_MEMINFO; 0 when unsupported.
func (p platformState) socketDrops(uc *net.UDPConn) uint64 {
	if !p.meminfo {
		return 0
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	var n uint64
	_ = rc.Control(func(fd uintptr) { n, _ = meminfoDrops(fd) })
	return n
}

// meminfoDrops is getsockopt(SOL_SOCKET, SO_MEMINFO)[SK_MEMINFO_DROPS].
func meminfoDrops(fd uintptr) (uint64, bool) {
	var buf [unix.SK_MEMINFO_VARS]uint32
	size := uint32(unsafe.Sizeof(buf))
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_SOCKET, unix.SO_MEMINFO,
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&size)), 0)
	if e != 0 || size < (unix.SK_MEMINFO_DROPS+1)*4 {
		return 0, false
	}
	return uint64(buf[unix.SK_MEMINFO_DROPS]), true
}

// setupSocket applies opt to the socket and switches on receive timestamps
// and drop counting, recording what worked in b.caps.
func setupSocket(uc *net.UDPConn, opt Options, b *base) error {
	rc, err := uc.SyscallConn()
	if err != nil {
		return fmt.Errorf("udpio: raw socket: %w", err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = setupFD(int(fd), opt, b) }); err != nil {
		return fmt.Errorf("udpio: socket options: %w", err)
	}
	return serr
}

func setupFD(fd int, opt Options, b *base) error {
	var err error
	if opt.ReadBuffer > 0 {
		b.caps.ReadBufferForced, err = setBuffer(fd, unix.SO_RCVBUFFORCE, unix.SO_RCVBUF, opt.ReadBuffer)
		if err != nil {
			return fmt.Errorf("udpio: set receive buffer to %d bytes: %w", opt.ReadBuffer, err)
		}
	}
	if opt.WriteBuffer > 0 {
		b.caps.WriteBufferForced, err = setBuffer(fd, unix.SO_SNDBUFFORCE, unix.SO_SNDBUF, opt.WriteBuffer)
		if err != nil {
			return fmt.Errorf("udpio: set send buffer to %d bytes: %w", opt.WriteBuffer, err)
		}
	}
	b.caps.ReadBuffer, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	b.caps.WriteBuffer, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
	b.caps.KernelRxTime = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil
	ovfl := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RXQ_OVFL, 1) == nil
	_, b.plat.meminfo = meminfoDrops(uintptr(fd))
	b.caps.DropCounter = ovfl || b.plat.meminfo
	if opt.GRO && !opt.NoBatch {
		b.caps.GRO = unix.SetsockoptInt(fd, unix.IPPROTO_UDP, unix.UDP_GRO, 1) == nil
	}
	return nil
}

// setBuffer sets a socket buffer size, first with the privileged option that
// ignores the system maximum, then with the plain one. It reports whether
// the privileged option worked.
func setBuffer(fd, forceOpt, plainOpt, n int) (forced bool, err error) {
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, forceOpt, n) == nil {
		return true, nil
	}
	return false, unix.SetsockoptInt(fd, unix.SOL_SOCKET, plainOpt, n)
}

// cmsgLenSize is the size of cmsghdr.cmsg_len (size_t on Linux).
const cmsgLenSize = unix.SizeofCmsghdr - 8

// KernelRxTime is the kernel's receive stamp (SCM_TIMESTAMPNS, on a
// socket with SO_TIMESTAMPNS set) among the control messages oob of one
// read, of any socket; false when there is none. It allocates nothing.
func KernelRxTime(oob []byte) (time.Time, bool) {
	t := parseOOB(oob).time
	return t, !t.IsZero()
}

// parseOOB reads the control messages of one received datagram without
// allocating. Malformed or unknown messages are skipped; parsing stops at
// the first header that does not fit.
//
//	struct cmsghdr { size_t cmsg_len; int cmsg_level; int cmsg_type; }
//	data: cmsg_len - CMSG_LEN(0) bytes, next header at CMSG_SPACE(data)
//	SCM_TIMESTAMPNS: struct timespec (2×int64, or 2×int32 on 32-bit ABIs)
//	SO_RXQ_OVFL:     u32 cumulative drop count
//	UDP_GRO (SOL_UDP): int, the size of the coalesced datagrams
func parseOOB(oob []byte) rxMeta {
	var meta rxMeta
	hdr := unix.CmsgLen(0)
	for len(oob) >= hdr {
		var l uint64
		if cmsgLenSize == 8 {
			l = binary.NativeEndian.Uint64(oob)
		} else {
			l = uint64(binary.NativeEndian.Uint32(oob))
		}
		if l < uint64(hdr) || l > uint64(len(oob)) {
			break
		}
		level := int32(binary.NativeEndian.Uint32(oob[cmsgLenSize:]))
		typ := int32(binary.NativeEndian.Uint32(oob[cmsgLenSize+4:]))
		data := oob[hdr:l]
		switch {
		case level == unix.SOL_SOCKET:
			parseSocketCmsg(typ, data, &meta)
		case level == unix.SOL_UDP && typ == unix.UDP_GRO && len(data) >= 4:
			meta.groSize = int(int32(binary.NativeEndian.Uint32(data)))
		}
		next := unix.CmsgSpace(int(l) - hdr)
		if next >= len(oob) {
			break
		}
		oob = oob[next:]
	}
	return meta
}

func parseSocketCmsg(typ int32, data []byte, meta *rxMeta) {
	switch typ {
	case unix.SCM_TIMESTAMPNS:
		var sec, nsec int64
		switch len(data) {
		case 16:
			sec = int64(binary.NativeEndian.Uint64(data))
			nsec = int64(binary.NativeEndian.Uint64(data[8:]))
		case 8:
			sec = int64(int32(binary.NativeEndian.Uint32(data)))
			nsec = int64(int32(binary.NativeEndian.Uint32(data[4:])))
		default:
			return
		}
		if nsec < 0 || nsec >= 1e9 || sec <= 0 {
			return
		}
		meta.time = time.Unix(sec, nsec)
	case unix.SO_RXQ_OVFL:
		if len(data) >= 4 {
			meta.drops = binary.NativeEndian.Uint32(data)
			meta.hasDrops = true
		}
	}
}
