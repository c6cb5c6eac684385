package rfc2544

import (
	"fmt"
	"time"
)

// Line is the progress line of a trial, as the rfc2544 command shows it.
func (p Progress) Line() string {
	return fmt.Sprintf("rfc2544: %s %d B, %s, about %v left", p.Test, p.Size, p.What, p.Left.Round(time.Second))
}
