package labctl

import (
	"errors"
	"fmt"
	"os"

	"github.com/wirebench/wirebench/internal/edtwire"
	"github.com/wirebench/wirebench/internal/netlab"
)

// The states of a lab in Status.State.
const (
	StateUp      = "up"
	StatePartial = "partial"
	StateDown    = "down"
)

// Status is what exists of a lab: `lab status --json`'s document.
type Status struct {
	Schema string `json:"schema"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	// State is "up" (the state file and all its namespaces exist),
	// "partial" (a crashed run's leftovers) or "down" (nothing exists).
	State      string          `json:"state"`
	Config     *State          `json:"config,omitempty"`
	Namespaces []netlab.NSInfo `json:"namespaces"`
	// Relays are the relays in r (`lab up --model`), running or not.
	Relays []RelayStatus `json:"relays,omitempty"`
	// Wire is the exact wire's counters per direction as its forwarder
	// last wrote them (every second), with `lab up --wire exact`.
	Wire []edtwire.Stats `json:"wire,omitempty"`
	// Filler is what the filled wire's filler has done per shaped link,
	// as it last wrote it (every second).
	Filler []netlab.FillStats `json:"filler,omitempty"`
	// Cost is the CPU time each of the lab's own processes has used.
	Cost []ProcCost `json:"cost,omitempty"`
	// StateFileError says why the state file could not be read, if it
	// exists but is unreadable or garbled (the lab is then "partial").
	StateFileError string `json:"state_file_error,omitempty"`
}

// ReadStatus returns what exists of lab name, from the kernel's view (its
// namespaces, their links, qdiscs and processes) and its state file.
func ReadStatus(name string) (Status, error) {
	s := Status{Schema: "wirebench/1", Kind: "lab-status", Name: name, State: StateDown, Namespaces: []netlab.NSInfo{}}
	nss, err := netlab.LabNamespaces(name)
	if err != nil {
		return s, err
	}
	unmounted := false
	for _, ns := range nss {
		info, err := netlab.Inspect(ns)
		if err != nil {
			return s, fmt.Errorf("inspecting lab %s: %w", name, err)
		}
		unmounted = unmounted || info.Unmounted
		s.Namespaces = append(s.Namespaces, info)
	}
	st, err := ReadState(name)
	switch {
	case err == nil:
		s.Config = &st
	case !errors.Is(err, os.ErrNotExist):
		s.StateFileError = err.Error()
	}
	s.Relays = relayStatuses(s.Config, s.Namespaces)
	s.Wire = readWireStats(s.Config)
	s.Filler = readFillerStats(s.Config)
	s.Cost = readCosts(s.Config, s.Namespaces, s.Relays)
	switch {
	case s.Config != nil && Complete(*s.Config, nss) && !unmounted:
		s.State = StateUp
	case len(nss) > 0 || s.Config != nil || s.StateFileError != "":
		s.State = StatePartial
	}
	return s, nil
}
