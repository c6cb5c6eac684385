package rfc2544

import (
	"fmt"

	"github.com/wirebench/wirebench/internal/eta"
)

// Line is the progress line of a trial, as the rfc2544 command shows it.
func (p Progress) Line() string {
	return fmt.Sprintf("rfc2544: %s %d B, %s, %s", p.Test, p.Size, p.What, eta.Phrase(p.Left))
}
