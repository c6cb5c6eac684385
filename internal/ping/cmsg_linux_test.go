//go:build linux

package ping

import (
	"encoding/binary"
	"net"
	"reflect"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestKernelTimestamp(t *testing.T) {
	want := time.Unix(1_700_000_000, 123456789)
	data := make([]byte, 16)
	binary.NativeEndian.PutUint64(data, uint64(want.Unix()))
	binary.NativeEndian.PutUint64(data[8:], uint64(want.Nanosecond()))
	oob := make([]byte, unix.CmsgSpace(16))
	hdr := make([]byte, unix.CmsgLen(0))
	binary.NativeEndian.PutUint64(hdr, uint64(unix.CmsgLen(16))) // cmsg_len is a size_t on linux/64-bit
	binary.NativeEndian.PutUint32(hdr[8:], unix.SOL_SOCKET)
	binary.NativeEndian.PutUint32(hdr[12:], unix.SCM_TIMESTAMPNS)
	copy(oob, hdr)
	copy(oob[len(hdr):], data)
	if unix.CmsgLen(0) != 16 {
		t.Skip("cmsg layout of this test is for 64-bit linux")
	}
	got, ok := kernelTimestamp(oob)
	if !ok || !got.Equal(want) {
		t.Errorf("kernelTimestamp = %v, %v; want %v", got, ok, want)
	}
	if _, ok := kernelTimestamp(oob[:10]); ok {
		t.Error("truncated control message gave a timestamp")
	}
}

func FuzzKernelTimestamp(f *testing.F) {
	f.Add(make([]byte, 32))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = kernelTimestamp(b)
	})
}

// cmsg builds one control message (64-bit Linux layout).
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	binary.NativeEndian.PutUint64(b, uint64(unix.CmsgLen(len(data))))
	binary.NativeEndian.PutUint32(b[8:], uint32(level))
	binary.NativeEndian.PutUint32(b[12:], uint32(typ))
	copy(b[unix.CmsgLen(0):], data)
	return b
}

// txErrQueue builds what recvmsg(MSG_ERRQUEUE) gives for one transmit
// timestamp: SCM_TIMESTAMPING (three timespecs) and the extended error.
func txErrQueue(level, typ int32, at time.Time, info, n uint32, origin uint8) []byte {
	ts := make([]byte, 48)
	binary.NativeEndian.PutUint64(ts, uint64(at.Unix()))
	binary.NativeEndian.PutUint64(ts[8:], uint64(at.Nanosecond()))
	ee := make([]byte, 16)
	binary.NativeEndian.PutUint32(ee, uint32(unix.ENOMSG))
	ee[4] = origin
	binary.NativeEndian.PutUint32(ee[8:], info)
	binary.NativeEndian.PutUint32(ee[12:], n)
	return append(cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPING, ts), cmsg(level, typ, ee)...)
}

func TestParseTxStamp(t *testing.T) {
	if unix.CmsgLen(0) != 16 {
		t.Skip("cmsg layout of this test is for 64-bit linux")
	}
	at := time.Unix(1_700_000_000, 5000)
	tests := []struct {
		name string
		oob  []byte
		ok   bool
	}{
		{"ipv4 sched", txErrQueue(unix.SOL_IP, unix.IP_RECVERR, at, unix.SCM_TSTAMP_SCHED, 7, unix.SO_EE_ORIGIN_TIMESTAMPING), true},
		{"ipv6 sched", txErrQueue(unix.SOL_IPV6, unix.IPV6_RECVERR, at, unix.SCM_TSTAMP_SCHED, 7, unix.SO_EE_ORIGIN_TIMESTAMPING), true},
		{"device stamp not used", txErrQueue(unix.SOL_IP, unix.IP_RECVERR, at, unix.SCM_TSTAMP_SND, 7, unix.SO_EE_ORIGIN_TIMESTAMPING), false},
		{"an icmp error, not a timestamp", txErrQueue(unix.SOL_IP, unix.IP_RECVERR, at, unix.SCM_TSTAMP_SCHED, 7, unix.SO_EE_ORIGIN_ICMP), false},
		{"no timestamp", cmsg(unix.SOL_IP, unix.IP_RECVERR, make([]byte, 16)), false},
		{"truncated", txErrQueue(unix.SOL_IP, unix.IP_RECVERR, at, unix.SCM_TSTAMP_SCHED, 7, unix.SO_EE_ORIGIN_TIMESTAMPING)[:70], false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, ok := parseTxStamp(tt.oob)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v (%+v)", ok, tt.ok, ts)
			}
			if ok && (ts.n != 7 || !ts.at.Equal(at)) {
				t.Errorf("stamp %+v, want send 7 at %v", ts, at)
			}
		})
	}
}

func FuzzParseTxStamp(f *testing.F) {
	f.Add(txErrQueue(unix.SOL_IP, unix.IP_RECVERR, time.Unix(1, 2), unix.SCM_TSTAMP_SCHED, 1, unix.SO_EE_ORIGIN_TIMESTAMPING))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseTxStamp(b)
		_, _ = dropCount(b)
	})
}

// icmpErrQueue builds what recvmsg(MSG_ERRQUEUE) gives an unprivileged
// ICMP socket for an ICMP error: the extended error followed by the
// reporting host's sockaddr_in.
func icmpErrQueue(origin, typ, code uint8, info uint32, from [4]byte) []byte {
	ee := make([]byte, 16+16)
	binary.NativeEndian.PutUint32(ee, uint32(unix.EHOSTUNREACH))
	ee[4], ee[5], ee[6] = origin, typ, code
	binary.NativeEndian.PutUint32(ee[8:], info)
	binary.NativeEndian.PutUint16(ee[16:], unix.AF_INET)
	copy(ee[20:], from[:])
	return cmsg(unix.SOL_IP, unix.IP_RECVERR, ee)
}

func TestParseQueuedError(t *testing.T) {
	if unix.CmsgLen(0) != 16 {
		t.Skip("cmsg layout of this test is for 64-bit linux")
	}
	quoted := []byte{8, 0, 0xab, 0xcd, 0x12, 0x34, 0x00, 0x09} // our echo request: id 0x1234, seq 9
	router := [4]byte{198, 18, 0, 9}
	tests := []struct {
		name string
		oob  []byte
		data []byte
		want Reply
		ok   bool
	}{
		{"host unreachable", icmpErrQueue(unix.SO_EE_ORIGIN_ICMP, 3, 1, 0, router), quoted,
			Reply{Kind: KindUnreachable, Type: 3, Code: 1, ID: 0x1234, Seq: 9}, true},
		{"fragmentation needed", icmpErrQueue(unix.SO_EE_ORIGIN_ICMP, 3, 4, 1400, router), quoted,
			Reply{Kind: KindTooBig, Type: 3, Code: 4, ID: 0x1234, Seq: 9, MTU: 1400}, true},
		{"time exceeded", icmpErrQueue(unix.SO_EE_ORIGIN_ICMP, 11, 0, 0, router), quoted,
			Reply{Kind: KindUnreachable, Type: 11, ID: 0x1234, Seq: 9}, true},
		{"local error: the send call said it", icmpErrQueue(unix.SO_EE_ORIGIN_LOCAL, 0, 0, 1500, router), quoted, Reply{}, false},
		{"not quoting an echo request", icmpErrQueue(unix.SO_EE_ORIGIN_ICMP, 3, 1, 0, router), []byte{0, 0, 0, 0, 0, 0, 0, 0}, Reply{}, false},
		{"quote too short", icmpErrQueue(unix.SO_EE_ORIGIN_ICMP, 3, 1, 0, router), quoted[:6], Reply{}, false},
		{"no extended error", nil, quoted, Reply{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, from, ok := parseQueuedError(tt.oob, tt.data, false)
			if ok != tt.ok || !reflect.DeepEqual(r, tt.want) {
				t.Fatalf("got %+v %v, want %+v %v", r, ok, tt.want, tt.ok)
			}
			if ok && !from.Equal(net.IP(router[:])) {
				t.Errorf("reported by %v, want %v", from, net.IP(router[:]))
			}
		})
	}
}

func FuzzParseQueuedError(f *testing.F) {
	f.Add(icmpErrQueue(unix.SO_EE_ORIGIN_ICMP, 3, 4, 1400, [4]byte{1, 2, 3, 4}), []byte{8, 0, 0, 0, 0, 1, 0, 2}, false)
	f.Fuzz(func(t *testing.T, oob, data []byte, v6 bool) {
		_, _, _ = parseQueuedError(oob, data, v6)
	})
}
