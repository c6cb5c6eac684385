package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/wirebench/wirebench/internal/result"
)

// WriteJSON writes r as one wirebench/1 document (docs/json.md). With
// indent the document is indented by two spaces, for a person reading a
// client's output; without, it is one line ending in a newline, so a
// server writing one document per test produces JSON Lines.
//
// The document is made from result.Sanitize(r): r itself is never
// changed, NaN and infinite numbers are written as 0 with a warning naming
// the key, and "intervals" and "warnings" are always arrays.
func WriteJSON(w io.Writer, r *result.Result, indent bool) error {
	if r == nil {
		return errors.New("writing JSON result: no result")
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(result.Sanitize(r)); err != nil {
		return fmt.Errorf("writing JSON result: %w", err)
	}
	return nil
}
