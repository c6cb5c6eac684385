package compare

import (
	"fmt"
	"strconv"

	"github.com/wirebench/wirebench/internal/result"
)

// Run is what naming needs of a compared run.
type Run struct {
	// ID is the run's id in its store.
	ID int64
	// Labels are the run's k=v labels.
	Labels map[string]string
	// SelectedBy are the labels the run was asked for by (a selector such
	// as link=usb), none when it was asked for by id.
	SelectedBy map[string]string
}

// Names names compared runs, in order, by labels where labels tell them
// apart: the labels a run was selected by, else those of its labels that
// not every compared run carries ("link=usb" against "link=eth" for two
// runs both labelled device=pic32); a run with neither is "run N". The
// command line and the dashboard name runs with it alike.
func Names(runs []Run) []string {
	names := make([]string, len(runs))
	for i, r := range runs {
		if len(r.SelectedBy) > 0 {
			names[i] = result.FormatLabels(r.SelectedBy)
			continue
		}
		own := map[string]string{}
		for k, v := range r.Labels {
			for _, o := range runs {
				if o.Labels[k] != v {
					own[k] = v
					break
				}
			}
		}
		names[i] = RunName(r.ID)
		if len(own) > 0 {
			names[i] = result.FormatLabels(own)
		}
	}
	return names
}

// RunName is a run's name by id alone: "run 12".
func RunName(id int64) string { return "run " + strconv.FormatInt(id, 10) }

// Who names a run for a sentence: its name, with its id when the name is
// labels ("link=usb (run 13)"); "run 13" when the name is the id or empty.
func Who(name string, id int64) string {
	if name == "" || name == RunName(id) {
		return RunName(id)
	}
	return fmt.Sprintf("%s (%s)", name, RunName(id))
}
