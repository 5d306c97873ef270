package inference

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// SpendReader reads spend from the recorded calls, priced as
// /calls/stream_query with include_costs prices them.
type SpendReader interface {
	// Spend is the cost in US dollars of projectID's calls started in
	// [start, end); with keyID, of that API key's calls alone.
	Spend(ctx context.Context, projectID, keyID string, start, end time.Time) (float64, error)
}

// BudgetStatus is a budget with its spend as last measured.
type BudgetStatus struct {
	BudgetRule
	SpentTodayUSD float64   `json:"spent_today_usd"`
	SpentMonthUSD float64   `json:"spent_month_usd"`
	Exceeded      bool      `json:"exceeded"`
	MeasuredAt    time.Time `json:"measured_at"`
}

// spendCaps enforces the configured budgets from spend it reads every
// interval, never per request: requests ask only the last verdict.
type spendCaps struct {
	reader SpendReader
	// blocked maps a project to the refusals of its exceeded budgets.
	blocked atomic.Pointer[map[string][]spendBlock]
	status  atomic.Pointer[[]BudgetStatus]
}

// spendBlock is one exceeded budget: the key it caps ("" for the whole
// project) and the refusal, written once when it was measured.
type spendBlock struct {
	key     string
	message string
}

func newSpendCaps(reader SpendReader) *spendCaps {
	s := &spendCaps{reader: reader}
	s.blocked.Store(&map[string][]spendBlock{})
	s.status.Store(&[]BudgetStatus{})
	return s
}

// blocking is the refusal of a request of keyID in project by an
// exceeded budget.
func (s *spendCaps) blocking(project, keyID string) (string, bool) {
	for _, b := range (*s.blocked.Load())[project] {
		if b.key == "" || b.key == keyID {
			return b.message, true
		}
	}
	return "", false
}

// budgetName is what refusals call a budget.
func budgetName(b BudgetRule) string {
	if b.Name != "" {
		return b.Name
	}
	if b.Key != "" {
		return fmt.Sprintf("%s key %s", b.Project, b.Key)
	}
	return b.Project
}

// refresh measures every budget at now and replaces the verdicts. A
// budget whose spend cannot be read keeps its last verdict.
func (s *spendCaps) refresh(ctx context.Context, budgets []BudgetRule, now time.Time) error {
	if s.reader == nil {
		return nil
	}
	now = now.UTC()
	day := now.Truncate(24 * time.Hour)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	last := map[string]BudgetStatus{}
	for _, st := range *s.status.Load() {
		last[st.Project+"\x00"+st.Key+"\x00"+st.Name] = st
	}
	blocked := map[string][]spendBlock{}
	status := make([]BudgetStatus, 0, len(budgets))
	var errs []error
	for _, b := range budgets {
		st, err := s.measure(ctx, b, day, month, now)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			errs = append(errs, fmt.Errorf("budget %q: %w", budgetName(b), err))
			prev, ok := last[b.Project+"\x00"+b.Key+"\x00"+b.Name]
			if !ok {
				continue
			}
			st = prev
			st.BudgetRule = b
			st.Exceeded = b.USDPerDay > 0 && st.SpentTodayUSD >= b.USDPerDay || b.USDPerMonth > 0 && st.SpentMonthUSD >= b.USDPerMonth
		}
		status = append(status, st)
		if msg, over := overBudget(st); over {
			blocked[b.Project] = append(blocked[b.Project], spendBlock{key: b.Key, message: msg})
		}
	}
	s.blocked.Store(&blocked)
	s.status.Store(&status)
	return errors.Join(errs...)
}

func (s *spendCaps) measure(ctx context.Context, b BudgetRule, day, month, now time.Time) (BudgetStatus, error) {
	st := BudgetStatus{BudgetRule: b, MeasuredAt: now}
	end := now.Add(time.Second) // calls started in this second count too
	var err error
	if b.USDPerDay > 0 {
		if st.SpentTodayUSD, err = s.reader.Spend(ctx, b.Project, b.Key, day, end); err != nil {
			return st, err
		}
	}
	if b.USDPerMonth > 0 {
		if st.SpentMonthUSD, err = s.reader.Spend(ctx, b.Project, b.Key, month, end); err != nil {
			return st, err
		}
	}
	_, st.Exceeded = overBudget(st)
	return st, nil
}

// overBudget is the refusal a measured budget makes, if it is spent.
func overBudget(st BudgetStatus) (string, bool) {
	b := st.BudgetRule
	who := "project " + b.Project
	if b.Key != "" {
		who = "API key " + b.Key + " in project " + b.Project
	}
	for _, p := range []struct {
		period, field string
		spent, cap    float64
	}{{"today (UTC)", "usd_per_day", st.SpentTodayUSD, b.USDPerDay}, {"this month (UTC)", "usd_per_month", st.SpentMonthUSD, b.USDPerMonth}} {
		if p.cap > 0 && p.spent >= p.cap {
			return fmt.Sprintf("Budget exceeded: %s has spent $%.4f %s, over its budget %q (%s %g; inference.budgets or PUT /inference/limits); "+
				"requests are refused until the period ends, or raise the budget", who, p.spent, p.period, budgetName(b), p.field, p.cap), true
		}
	}
	return "", false
}
