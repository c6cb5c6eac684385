// Package units parses and formats the quantities wirebench's command line
// takes and prints: rates in bit/s with SI suffixes or packets per second,
// and byte sizes with binary suffixes, the way iperf users type them.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Rate is a requested sending rate: either bits per second or, when PPS is
// true, packets per second.
type Rate struct {
	Value float64
	PPS   bool
}

// String formats the rate the way it could be typed back in.
func (r Rate) String() string {
	if r.PPS {
		return strconv.FormatFloat(r.Value, 'f', -1, 64) + "pps"
	}
	return FormatBits(r.Value)
}

// ParseRate reads a rate such as "100M", "1.5G", "64k", "250000" (bit/s,
// SI multiples of 1000) or "8000pps". A trailing "bps", "bit/s" or "/s" is
// accepted. Zero and negative rates are errors.
func ParseRate(s string) (Rate, error) {
	in := strings.TrimSpace(s)
	low := strings.ToLower(in)
	if strings.HasSuffix(low, "pps") {
		v, err := strconv.ParseFloat(strings.TrimSpace(low[:len(low)-3]), 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return Rate{}, fmt.Errorf("invalid rate %q: want a positive number of packets per second, like 8000pps", s)
		}
		return Rate{Value: v, PPS: true}, nil
	}
	for _, suf := range []string{"bit/s", "bps", "/s"} {
		low = strings.TrimSuffix(low, suf)
	}
	v, err := parseScaled(low, 1000)
	if err != nil || v <= 0 {
		return Rate{}, fmt.Errorf("invalid rate %q: want a positive bit rate like 100M, 1.5G, 64k, or packets per second like 8000pps", s)
	}
	return Rate{Value: v}, nil
}

// ParseSize reads a byte count such as "1470", "64K", "2M", "1G" (binary
// multiples of 1024). A trailing "B" is accepted. Negative sizes are errors.
func ParseSize(s string) (int64, error) {
	low := strings.ToLower(strings.TrimSpace(s))
	if len(low) > 1 && strings.HasSuffix(low, "b") && strings.ContainsAny(low[len(low)-2:len(low)-1], "kmg") {
		low = low[:len(low)-1]
	}
	v, err := parseScaled(low, 1024)
	if err != nil || v < 0 || v > math.MaxInt64/2 || v != math.Trunc(v) {
		return 0, fmt.Errorf("invalid size %q: want a whole number of bytes, optionally with K, M or G (1024-based), like 1470 or 128K", s)
	}
	return int64(v), nil
}

func parseScaled(s string, base float64) (float64, error) {
	if s == "" {
		return 0, fmt.Errorf("empty")
	}
	mult := 1.0
	switch s[len(s)-1] {
	case 'k':
		mult = base
	case 'm':
		mult = base * base
	case 'g':
		mult = base * base * base
	case 't':
		mult = base * base * base * base
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	if math.IsInf(v*mult, 0) {
		return 0, fmt.Errorf("out of range: %q", s)
	}
	return v * mult, nil
}

// FormatBits formats a bit rate with an SI prefix, iperf style:
// "95.7 Mbits/sec".
func FormatBits(bps float64) string {
	return scaled(bps, 1000, "bits/sec")
}

// FormatBytes formats a byte count with a binary prefix, iperf style:
// "11.4 MBytes".
func FormatBytes(n float64) string {
	return scaled(n, 1024, "Bytes")
}

func scaled(v, base float64, unit string) string {
	prefixes := []string{"", "K", "M", "G", "T"}
	i := 0
	for math.Abs(v) >= base && i < len(prefixes)-1 {
		v /= base
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", v, unit)
	}
	return digits(v) + " " + prefixes[i] + unit
}

// digits prints v with iperf's precision: two decimals below 10, one below
// 100, none above.
func digits(v float64) string {
	switch {
	case math.Abs(v) < 9.995:
		return fmt.Sprintf("%.2f", v)
	case math.Abs(v) < 99.95:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// Formats are iperf's -f letters: a adaptive bits (the default), A adaptive
// bytes, b bits, B bytes, k/m/g Kbits/Mbits/Gbits (powers of 1000), K/M/G
// KBytes/MBytes/GBytes (powers of 1024).
const Formats = "aAbBkmgKMG"

// ValidFormat reports whether f is one of Formats.
func ValidFormat(f byte) bool { return f != 0 && strings.IndexByte(Formats, f) >= 0 }

// FormatRateIn formats a rate in bit/s in the unit of -f letter f; 0 or
// 'a' is FormatBits. Upper-case letters give bytes per second.
func FormatRateIn(bps float64, f byte) string {
	switch f {
	case 'b':
		return fmt.Sprintf("%.0f bits/sec", bps)
	case 'B':
		return fmt.Sprintf("%.0f Bytes/sec", bps/8)
	case 'A':
		return scaled(bps/8, 1024, "Bytes/sec")
	case 'k', 'm', 'g':
		return digits(bps/math.Pow(1000, float64(strings.IndexByte("kmg", f)+1))) + " " + string(f-'a'+'A') + "bits/sec"
	case 'K', 'M', 'G':
		return digits(bps/8/math.Pow(1024, float64(strings.IndexByte("KMG", f)+1))) + " " + string(f) + "Bytes/sec"
	}
	return FormatBits(bps)
}

// FormatBytesIn formats a byte count for -f letter f, as iperf does: in
// the byte unit of the letter's upper case (k and K both give KBytes);
// adaptive for 0, 'a' and 'A'.
func FormatBytesIn(n float64, f byte) string {
	switch f {
	case 'b', 'B':
		return fmt.Sprintf("%.0f Bytes", n)
	case 'k', 'm', 'g', 'K', 'M', 'G':
		u := f &^ 0x20 // upper case
		return digits(n/math.Pow(1024, float64(strings.IndexByte("KMG", u)+1))) + " " + string(u) + "Bytes"
	}
	return FormatBytes(n)
}

// Plural is n with its noun, as people write it: "1 run", "37 runs" (the
// noun's plural taken as noun + "s").
func Plural[N ~int | ~int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
