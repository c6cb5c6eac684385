package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// WriteDevice prints the device's own figures (r.Device, from --dut) beside
// wirebench's, and the difference: against our sender when the device
// received (it was the server), against our receiver when it sent. It
// prints nothing when no device was driven.
func WriteDevice(w io.Writer, r *result.Result) error {
	d := r.Device
	if d == nil {
		return nil
	}
	var b strings.Builder
	if d.Error != "" && d.BitsPerSecond == nil {
		fmt.Fprintf(&b, "[dut] %s (%s): no figures: %s\n", d.Shell, d.Role, d.Error)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "[dut] %-9s %s reported %s\n", d.Shell, "("+d.Role+")", deviceFigures(d.BitsPerSecond, d.Packets, d.Lost, d.OutOfOrder, d.JitterMS, d.Seconds))
	ourBPS, ourPk, ourLost, what := counterpart(r, d.Role)
	if what == "" {
		b.WriteString("[dut] wirebench has no counterpart figures to compare\n")
	} else {
		fmt.Fprintf(&b, "[dut] wirebench  (%s) %s\n", what, deviceFigures(&ourBPS, ourPk, ourLost, nil, nil, nil))
		if d.BitsPerSecond != nil {
			diff := *d.BitsPerSecond - ourBPS
			pct := ""
			if ourBPS > 0 {
				pct = fmt.Sprintf(" (%+.1f%%)", diff/ourBPS*100)
			}
			fmt.Fprintf(&b, "[dut] difference device − wirebench: %s%s", signed(diff), pct)
			if d.Packets != nil && ourPk != nil {
				fmt.Fprintf(&b, ", packets %+d", *d.Packets-*ourPk)
			}
			if d.Lost != nil && ourLost != nil {
				fmt.Fprintf(&b, ", lost %+d", *d.Lost-*ourLost)
			}
			b.WriteString("\n")
		}
	}
	if d.Error != "" {
		fmt.Fprintf(&b, "[dut] WARNING: %s\n", d.Error)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// counterpart returns our figures opposite the device's role.
func counterpart(r *result.Result, role string) (bps float64, packets, lost *int64, what string) {
	if role == "server" && r.Sender != nil {
		s := r.Sender
		if r.Test.Protocol == result.UDP {
			packets = &s.Packets
		}
		return s.BitsPerSecond, packets, nil, "sender"
	}
	if role == "client" && r.Receiver != nil {
		v := r.Receiver
		if r.Test.Protocol == result.UDP {
			packets, lost = &v.Packets, &v.Lost
		}
		return v.BitsPerSecond, packets, lost, "receiver"
	}
	return 0, nil, nil, ""
}

func deviceFigures(bps *float64, packets, lost, ooo *int64, jitter, secs *float64) string {
	var parts []string
	if bps != nil {
		parts = append(parts, units.FormatBits(*bps))
	}
	if packets != nil {
		parts = append(parts, fmt.Sprintf("%d packets", *packets))
	}
	if lost != nil {
		parts = append(parts, fmt.Sprintf("%d lost", *lost))
	}
	if ooo != nil {
		parts = append(parts, fmt.Sprintf("%d out of order", *ooo))
	}
	if jitter != nil {
		parts = append(parts, fmt.Sprintf("jitter %.3f ms", *jitter))
	}
	if secs != nil {
		parts = append(parts, fmt.Sprintf("over %.2f s", *secs))
	}
	return strings.Join(parts, ", ")
}

func signed(bps float64) string {
	if bps < 0 {
		return "-" + units.FormatBits(-bps)
	}
	return "+" + units.FormatBits(bps)
}
