package htmlreport

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes the report to path: next to it first and then renamed,
// so that a failure never leaves a half-written report in place of an
// earlier one.
func (r *Report) WriteFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".wirebench-report-*.html")
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := r.WriteHTML(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}
