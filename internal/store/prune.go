package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Prune says which runs to delete: of those Filter selects (its Since and
// Limit are not used), the ones that started before Before (zero: no age
// limit) and the ones beyond the newest Keep (0: no count limit). A run
// either rule names is deleted, with its labels.
type Prune struct {
	Filter Filter
	Before time.Time
	Keep   int
}

// ErrNothingToPrune says a Prune names neither an age nor a count.
var ErrNothingToPrune = errors.New("pruning the results store needs an age (--older-than) or a count to keep (--keep)")

func (s *sqlStore) Prune(ctx context.Context, p Prune) (int64, error) {
	if p.Before.IsZero() && p.Keep <= 0 {
		return 0, ErrNothingToPrune
	}
	p.Filter.Since, p.Filter.Limit = time.Time{}, 0
	where, args := s.where(p.Filter)
	var rules []string
	if !p.Before.IsZero() {
		rules = append(rules, "started_at < ?")
		args = append(args, s.d.timeArg(p.Before))
	}
	if p.Keep > 0 {
		inner, innerArgs := s.where(p.Filter)
		rules = append(rules, "id NOT IN (SELECT id FROM runs"+inner+" ORDER BY started_at DESC, id DESC LIMIT "+strconv.Itoa(p.Keep)+")")
		args = append(args, innerArgs...)
	}
	rule := "(" + strings.Join(rules, " OR ") + ")"
	if where == "" {
		where = " WHERE " + rule
	} else {
		where += " AND " + rule
	}
	res, err := s.db.ExecContext(ctx, s.q("DELETE FROM runs"+where), args...)
	if err != nil {
		return 0, fmt.Errorf("pruning runs in %s: %w", s.location, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("pruning runs in %s: %w", s.location, err)
	}
	return n, nil
}
