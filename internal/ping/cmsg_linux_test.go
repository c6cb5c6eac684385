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
