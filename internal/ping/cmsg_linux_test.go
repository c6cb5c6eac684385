//go:build linux

package ping

import (
	"encoding/binary"
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
