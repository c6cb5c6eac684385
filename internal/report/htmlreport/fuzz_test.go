package htmlreport

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReport: any bytes given as a document either fail to decode with an
// error or render — the renderer never panics on what a file holds (a
// document of a known kind with keys of the wrong type, NaN-free numbers
// of any size, empty lists).
func FuzzReport(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"schema":"wirebench/1","kind":"matrix","cells":[{"protocol":"udp","bits_per_second":1e308,"result":{"intervals":[{"start_s":1,"end_s":1}]}}]}`))
	f.Add([]byte(`{"schema":"wirebench/1","kind":"request-response","rtt":{"bins":[{"from_ms":0,"to_ms":0,"count":0}]}}`))
	f.Add([]byte(`{"schema":"wirebench/1","kind":"sweep","sizes":[{"size":-1,"rate_bps":-5,"percent_of_line":0}]}`))
	for _, s := range extremeDocs {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Decode("fuzz.json", b)
		if err != nil {
			return
		}
		r, err := Build("fuzz", []Document{d, d})
		if err != nil {
			return
		}
		if err := r.WriteHTML(io.Discard); err != nil {
			t.Logf("rendering: %v", err)
		}
	})
}
