package sweep

import (
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
)

// Point statuses (result.SweepSize.Status).
const (
	StatusOK      = linerate.StatusOK
	StatusSuspect = linerate.StatusSuspect
)

// judge sets a size's status: suspect, with the reason in words and as a
// warning, when its rate is more than 0.1 % above the medium's packet rate
// for the size (no path made of the medium carries more); ok otherwise.
func judge(sr *result.SweepSize, medium string) {
	sr.Status, sr.Reason = StatusOK, ""
	if sr.PercentOfLine == nil {
		return
	}
	if medium == "" {
		medium = "the medium"
	}
	if why := linerate.AboveMedium("rate", *sr.PercentOfLine, medium); why != "" {
		sr.Status, sr.Reason = StatusSuspect, why
		sr.Warnings = append(sr.Warnings, why)
	}
}
