package admit

import (
	"net/netip"
	"runtime"
	"testing"
)

// BenchmarkLimiterChurn admits one test from each of b.N distinct sources
// through a default-size table, as a flood of forged sources would, and
// reports the heap in use at the end (the table's memory with it):
//
//	go test ./internal/admit -run '^$' -bench LimiterChurn -benchtime 16000000x
func BenchmarkLimiterChurn(b *testing.B) {
	l := NewLimiter(LimitConfig{MaxActive: DefaultMaxActive, PerSecond: DefaultPerSecond})
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := netip.AddrFrom4([4]byte{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)})
		if rel, err := l.Admit(a); err == nil {
			rel()
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(int64(m1.HeapInuse)-int64(m0.HeapInuse))/(1<<20), "heap-MiB")
	b.ReportMetric(float64(l.Len()), "sources")
}
