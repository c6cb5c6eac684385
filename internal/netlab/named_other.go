//go:build !linux

package netlab

import (
	"context"
	"os/exec"
	"time"
)

// Release does nothing.
func (l *Lab) Release() {}

// LabNamespaces returns ErrNotSupported.
func LabNamespaces(lab string) ([]string, error) { return nil, ErrNotSupported }

// NamespacePIDs returns ErrNotSupported.
func NamespacePIDs(ns string) ([]int, error) { return nil, ErrNotSupported }

// RemoveLab returns ErrNotSupported.
func RemoveLab(ctx context.Context, lab string, grace time.Duration) (removed []string, killed []int, err error) {
	return nil, nil, ErrNotSupported
}

// StartIn returns ErrNotSupported.
func StartIn(ns string, cmd *exec.Cmd) error { return ErrNotSupported }

// Inspect returns ErrNotSupported.
func Inspect(ns string) (NSInfo, error) { return NSInfo{Name: ns}, ErrNotSupported }
