package check

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Criterion is one condition on one figure of a step's result document:
// "receiver.bits_per_second >= 90M" (absolute) or
// "receiver.bits_per_second >= 95% of baseline" (relative).
type Criterion struct {
	// Text is the criterion as written in the plan.
	Text string
	// Path addresses the figure in the step's result document (path.go).
	Path string
	// Op is one of ">=", "<=", ">", "<".
	Op string
	// Value is the absolute bound, or with Relative the share of the
	// baseline's figure (0.95 for "95% of baseline").
	Value float64
	// Relative says the bound is a share of the baseline run's figure.
	Relative bool
}

// Percent is a relative bound's share as people write it: "110" for
// "110% of baseline", where 100 times the stored share may read
// 110.00000000000001.
func (c Criterion) Percent() string {
	return strconv.FormatFloat(100*c.Value, 'g', 12, 64)
}

// ops are the comparison operators, longest first so ">=" is not read as ">".
var ops = []string{">=", "<=", ">", "<"}

// ParseCriterion reads "PATH OP BOUND". BOUND is a number with an optional
// SI multiple (k, M, G, T: powers of 1000), such as 90M or 0.1, or
// "N% of baseline".
func ParseCriterion(s string) (Criterion, error) {
	c := Criterion{Text: strings.TrimSpace(s)}
	if c.Text == "" {
		return c, fmt.Errorf("empty criterion: want PATH OP BOUND, like \"receiver.bits_per_second >= 90M\"")
	}
	at, op := -1, ""
	for _, o := range ops {
		if i := strings.Index(c.Text, o); i >= 0 && (at < 0 || i < at) {
			at, op = i, o
		}
	}
	if at < 0 {
		for _, bad := range []string{"==", "=", "!="} {
			if strings.Contains(c.Text, bad) {
				return c, fmt.Errorf("criterion %q: operator %q is not supported: use >=, <=, > or <", s, bad)
			}
		}
		return c, fmt.Errorf("criterion %q: no operator: want PATH OP BOUND with OP one of >=, <=, >, <", s)
	}
	c.Op = op
	c.Path = strings.TrimSpace(c.Text[:at])
	bound := strings.TrimSpace(c.Text[at+len(op):])
	if c.Path == "" {
		return c, fmt.Errorf("criterion %q: no figure before %q: want a path like receiver.bits_per_second", s, op)
	}
	if strings.ContainsAny(c.Path, " \t<>") {
		return c, fmt.Errorf("criterion %q: figure %q holds a space or an operator: want one path like receiver.bits_per_second", s, c.Path)
	}
	if bound == "" {
		return c, fmt.Errorf("criterion %q: no bound after %q: want a number like 90M or a share like 95%% of baseline", s, op)
	}
	if pct, ok := strings.CutSuffix(bound, "of baseline"); ok {
		pct = strings.TrimSpace(pct)
		num, isPct := strings.CutSuffix(pct, "%")
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if !isPct || err != nil || v <= 0 || math.IsInf(v, 0) {
			return c, fmt.Errorf("criterion %q: %q is not a share of the baseline: want a positive percentage like \"95%% of baseline\"", s, bound)
		}
		c.Value, c.Relative = v/100, true
		return c, nil
	}
	if strings.Contains(bound, "baseline") {
		return c, fmt.Errorf("criterion %q: %q: a relative bound is written \"N%% of baseline\", like \"95%% of baseline\"", s, bound)
	}
	v, err := ParseNumber(bound)
	if err != nil {
		return c, fmt.Errorf("criterion %q: %w", s, err)
	}
	c.Value = v
	return c, nil
}

// ParseNumber reads a bound: a decimal number with an optional SI multiple
// k/K (1e3), M (1e6), G (1e9) or T (1e12), as rates are written (90M is
// 90 000 000). A lower-case m is refused: it could mean milli.
func ParseNumber(s string) (float64, error) {
	num, mult := s, 1.0
	switch s[len(s)-1] {
	case 'k', 'K':
		mult = 1e3
	case 'M':
		mult = 1e6
	case 'G':
		mult = 1e9
	case 'T':
		mult = 1e12
	case 'm':
		return 0, fmt.Errorf("bound %q: \"m\" is ambiguous (milli or mega): write M for 10^6, or the number itself", s)
	}
	if mult != 1 {
		num = s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("bound %q is not a number: want e.g. 90M, 1.5G, 250k, 0.1 or \"95%% of baseline\"", s)
	}
	return v * mult, nil
}

// holds reports whether value op bound is true.
func holds(value float64, op string, bound float64) bool {
	switch op {
	case ">=":
		return value >= bound
	case "<=":
		return value <= bound
	case ">":
		return value > bound
	case "<":
		return value < bound
	}
	return false
}
