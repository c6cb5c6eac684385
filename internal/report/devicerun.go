package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// DeviceCounts reads the data datagrams a device received and lost from
// its own figures (ok false when it did not print them); dut.ReceivedCounts
// is one, which knows each firmware's way of counting.
type DeviceCounts func(d result.Device) (received, lost int64, ok bool)

// WriteMatrixDevice prints, per cell that has them, the device's own
// figures beside ours (a matrix run with --dut).
func WriteMatrixDevice(w io.Writer, m *result.Matrix) error {
	for _, c := range m.Cells {
		if c.Result == nil || c.Result.Device == nil {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s:\n", c.Name()); err != nil {
			return err
		}
		if err := WriteDevice(w, c.Result); err != nil {
			return err
		}
	}
	return nil
}

// WriteSweepDevice prints, per size, the device's own figures of the
// confirming trial beside ours, with the difference (a sweep run with
// --dut; nothing without). counts reads the device's received datagrams.
func WriteSweepDevice(w io.Writer, r *result.Sweep, counts DeviceCounts) error {
	if r.Device == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "device %s (%s), its own report of each size's confirming trial; the loss was judged on the counts of\n", r.Device.Shell, r.Device.Spec)
	b.WriteString("  peer_report: the server's report to our client, device: the device's report (no report came back)\n")
	fmt.Fprintf(&b, "%-7s %-12s %-9s %-9s %-9s %-9s %-12s %-13s %s\n", "size", "counted by", "sent", "peer rx", "dev rx", "dev lost", "our Mbit/s", "dev Mbit/s", "difference device − ours")
	for _, s := range r.Sizes {
		writeSweepDeviceSize(&b, s, counts)
	}
	b.WriteString("(our sender counts its FIN as one datagram, as iperf does; a device counts data only, so −1 received is no loss)\n")
	if r.Device.Error != "" {
		fmt.Fprintf(&b, "device: %s\n", r.Device.Error)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSweepDeviceSize is WriteSweepDevice's row of one size.
func writeSweepDeviceSize(b *strings.Builder, s result.SweepSize, counts DeviceCounts) {
	d := s.Device
	if d == nil {
		fmt.Fprintf(b, "%-7d no device figures\n", s.Size)
		return
	}
	peer, sent, oursBPS := "-", s.Sent, s.RateBPS
	for _, t := range s.TrialLog {
		if t.Device == d && t.CountedBy == result.CountedByPeer {
			peer = fmt.Sprint(t.Received) // the confirming trial's
		}
	}
	ours := fmt.Sprintf("%.2f", oursBPS/1e6)
	counted := s.CountedBy
	if counted == "" {
		counted = "none"
	}
	rx, lost, devBPS := optCount(d.Packets), optCount(d.Lost), "-"
	var diff []string
	if d.BitsPerSecond != nil {
		devBPS = fmt.Sprintf("%.2f", *d.BitsPerSecond/1e6)
		if oursBPS > 0 {
			diff = append(diff, fmt.Sprintf("rate %+.1f%%", (*d.BitsPerSecond-oursBPS)/oursBPS*100))
		}
	}
	if got, _, ok := counts(*d); ok {
		diff = append(diff, fmt.Sprintf("received %+d of %d sent", got-sent, sent))
	}
	if d.Error != "" {
		diff = append(diff, "device error: "+d.Error)
	}
	fmt.Fprintf(b, "%-7d %-12s %-9d %-9s %-9s %-9s %-12s %-13s %s\n", s.Size, counted, sent, peer, rx, lost, ours, devBPS, strings.Join(diff, ", "))
}

// optCount prints an optional count, "-" when the firmware does not print
// it.
func optCount(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}
