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
// of any size, empty lists), nor on the dashboard's charts of it.
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
	f.Add([]byte(`{"schema":"wirebench/1","kind":"test","test":{"protocol":"udp","duration_s":1e308},"intervals":[{"start_s":0,"end_s":1e300,"lost":-5,"packets":-3,"jitter_ms":1e308},{"start_s":1,"end_s":2,"lost":5,"packets":-10}]}`))
	f.Add([]byte(`{"schema":"wirebench/1","kind":"sweep","sizes":[{"size":64,"rate_pps":1e300,"line_pps":1e308},{"size":64,"rate_pps":-1}],"cliffs":[{"below":1,"above":0}]}`))
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
		// The dashboard's charts of the document (its extra ones too).
		charts, err := DashboardCharts(d)
		if err != nil {
			return
		}
		for _, c := range charts {
			if _, err := c.SVG(); err != nil {
				t.Logf("drawing %s: %v", c.Title, err)
			}
		}
	})
}
