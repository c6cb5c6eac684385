//go:build linux

package ping

import (
	"encoding/binary"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// kernelTimestamp finds an SCM_TIMESTAMPNS control message (a struct
// timespec in native byte order: two longs) and returns its time.
func kernelTimestamp(oob []byte) (time.Time, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_SOCKET || m.Header.Type != unix.SCM_TIMESTAMPNS {
			continue
		}
		return decodeTimespec(m.Data)
	}
	return time.Time{}, false
}

// dropCount finds an SO_RXQ_OVFL control message: how many messages the
// socket has dropped since it was opened, for want of buffer space.
func dropCount(oob []byte) (uint32, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_RXQ_OVFL && len(m.Data) >= 4 {
			return binary.NativeEndian.Uint32(m.Data), true
		}
	}
	return 0, false
}

// parseQueuedError reads an ICMP error about one of our echo requests from
// an error-queue message: the extended error (origin ICMP or ICMP6: type,
// code, the MTU in ee_info, then the reporting host's address) and the
// data, which starts at the quoted echo request's header. Errors of local
// origin (a send refused at once) are not returned: the send call
// reported them.
func parseQueuedError(oob, data []byte, v6 bool) (Reply, net.IP, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil || len(data) < 8 {
		return Reply{}, nil, false
	}
	echo, origin := byte(8), byte(unix.SO_EE_ORIGIN_ICMP)
	if v6 {
		echo, origin = 128, unix.SO_EE_ORIGIN_ICMP6
	}
	if data[0] != echo {
		return Reply{}, nil, false
	}
	for _, m := range msgs {
		if !(m.Header.Level == unix.SOL_IP && m.Header.Type == unix.IP_RECVERR) &&
			!(m.Header.Level == unix.SOL_IPV6 && m.Header.Type == unix.IPV6_RECVERR) {
			continue
		}
		d := m.Data
		if len(d) < 16 || d[4] != origin {
			continue
		}
		r := Reply{Kind: KindUnreachable, Type: int(d[5]), Code: int(d[6]),
			ID: int(binary.BigEndian.Uint16(data[4:])), Seq: int(binary.BigEndian.Uint16(data[6:]))}
		mtu := int(binary.NativeEndian.Uint32(d[8:]))
		if !v6 && r.Type == 3 && r.Code == 4 || v6 && r.Type == 2 {
			r.Kind, r.MTU = KindTooBig, mtu
		}
		return r, offender(d[16:]), true
	}
	return Reply{}, nil, false
}

// offender reads the address of the host that sent an ICMP error: the
// struct sockaddr_in or sockaddr_in6 after struct sock_extended_err.
func offender(sa []byte) net.IP {
	if len(sa) < 8 {
		return nil
	}
	switch binary.NativeEndian.Uint16(sa) {
	case unix.AF_INET:
		return net.IP(append([]byte(nil), sa[4:8]...))
	case unix.AF_INET6:
		if len(sa) >= 24 {
			return net.IP(append([]byte(nil), sa[8:24]...))
		}
	}
	return nil
}

// parseTxStamp reads a transmit timestamp from the control messages of an
// error-queue message: SCM_TIMESTAMPING (three timespecs, the first the
// software one) and the extended error (SO_EE_ORIGIN_TIMESTAMPING) that
// says which send; only queueing-layer stamps (SCM_TSTAMP_SCHED) count.
func parseTxStamp(oob []byte) (txStamp, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return txStamp{}, false
	}
	var ts txStamp
	var haveTime, haveErr bool
	for _, m := range msgs {
		switch {
		case m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPING:
			if len(m.Data) == 0 || len(m.Data)%3 != 0 {
				continue
			}
			ts.at, haveTime = decodeTimespec(m.Data[:len(m.Data)/3])
		case m.Header.Level == unix.SOL_IP && m.Header.Type == unix.IP_RECVERR,
			m.Header.Level == unix.SOL_IPV6 && m.Header.Type == unix.IPV6_RECVERR:
			// struct sock_extended_err: errno u32, origin u8, type u8,
			// code u8, pad u8, info u32, data u32.
			d := m.Data
			if len(d) < 16 || d[4] != unix.SO_EE_ORIGIN_TIMESTAMPING {
				continue
			}
			if binary.NativeEndian.Uint32(d[8:]) != unix.SCM_TSTAMP_SCHED {
				continue
			}
			ts.n, haveErr = binary.NativeEndian.Uint32(d[12:]), true
		}
	}
	if !haveTime || !haveErr || ts.at.Equal(time.Unix(0, 0)) {
		return txStamp{}, false
	}
	return ts, true
}

func decodeTimespec(d []byte) (time.Time, bool) {
	switch len(d) {
	case 16:
		return time.Unix(int64(binary.NativeEndian.Uint64(d)), int64(binary.NativeEndian.Uint64(d[8:]))), true
	case 8:
		return time.Unix(int64(int32(binary.NativeEndian.Uint32(d))), int64(int32(binary.NativeEndian.Uint32(d[4:])))), true
	}
	return time.Time{}, false
}
