package compare

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
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
			names[i] = FormatLabels(r.SelectedBy)
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
			names[i] = FormatLabels(own)
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

// FormatLabels writes labels as the history prints them: k=v,k2=v2,
// sorted by key; "" without labels.
func FormatLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, ",")
}
