package htmlreport

import (
	"slices"

	"github.com/wirebench/wirebench/internal/result"
)

// rfcDone says whether the size finished test (one of the names in
// "tests" and "done").
func rfcDone(z result.RFC2544Size, test string) bool { return slices.Contains(z.Done, test) }

// rfcLineBPS is the medium's maximum rate for the size in UDP payload
// bit/s (the unit of ndr_bps and pdr_bps).
func rfcLineBPS(z result.RFC2544Size) float64 { return z.LinePPS * 8 * float64(z.Size) }
