package selftest

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/wirebench/wirebench/internal/units"
)

// Options are the loopback command's flags, as typed.
type Options struct {
	Seconds float64 // per test
	Rate    string  // the UDP test's: bit/s with k/M/G, or pps
}

// Check validates the options and returns each test's duration and the
// UDP rate. Every error is a mistake in them.
func (o Options) Check() (time.Duration, units.Rate, error) {
	if o.Seconds <= 0 || o.Seconds > 3600 {
		return 0, units.Rate{}, fmt.Errorf("invalid duration -t %v: want 0 < seconds ≤ 3600", o.Seconds)
	}
	r, err := units.ParseRate(o.Rate)
	if err != nil {
		return 0, units.Rate{}, err
	}
	return time.Duration(o.Seconds * float64(time.Second)), r, nil
}

// WriteJSON writes the document as indented JSON, its text unescaped.
func (d Doc) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}
