package htmlreport

import (
	"errors"
	"fmt"
	"io"

	"github.com/wirebench/wirebench/internal/result"
)

// Options are the report command's choices as typed: the HTML file to
// write (-o), a directory for PNG copies of the charts (--png, empty:
// none) and the title.
type Options struct {
	Out   string
	PNG   string
	Title string
}

// Check says what the options lack before anything is read.
func (o Options) Check() error {
	if o.Out == "" {
		return errors.New("-o FILE is required: where to write the HTML report")
	}
	return nil
}

// DecodeRun reads a saved run's result document, named in the page as
// "run N (its labels)".
func DecodeRun(r *result.Run) (Document, error) {
	run := fmt.Sprintf("run %d", r.ID)
	name := run
	if lbl := result.FormatLabels(r.Labels); lbl != "" {
		name += " (" + lbl + ")"
	}
	d, err := Decode(name, r.Result)
	if err != nil {
		return d, err
	}
	d.Run, d.Labels = run, r.Labels
	return d, nil
}

// Write builds the report of docs, writes it to Out and, with PNG, each
// chart as a PNG file, and says on w what it wrote.
func (o Options) Write(w io.Writer, docs []Document) error {
	r, err := Build(o.Title, docs)
	if err != nil {
		return fmt.Errorf("building the report: %w", err)
	}
	if err := r.WriteFile(o.Out); err != nil {
		return err
	}
	fmt.Fprintf(w, "report: %s (%d documents, %d charts)\n", o.Out, len(docs), len(r.Charts()))
	if o.PNG == "" {
		return nil
	}
	paths, err := r.WritePNGs(o.PNG)
	if err != nil {
		return err
	}
	for _, p := range paths {
		fmt.Fprintf(w, "chart: %s\n", p)
	}
	return nil
}
