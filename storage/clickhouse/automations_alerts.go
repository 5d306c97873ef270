package clickhouse

import (
	"context"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
)

const alertStateColumns = "project_id, automation_id, state, value, seq, evaluated_at, changed_at"

// AlertAutomations implements storage.AlertStore.
func (s *Store) AlertAutomations(ctx context.Context, limit int) ([]storage.Automation, error) {
	return s.readAutomationsOrdered(ctx, "event = {event:String} AND enabled", "ORDER BY project_id, id LIMIT {limit:UInt32}",
		clickhouse.Named("event", storage.EventCallAlert), clickhouse.Named("limit", uint32(limit)))
}

// AlertStates implements storage.AlertStore.
func (s *Store) AlertStates(ctx context.Context, projectID string) ([]storage.AlertState, error) {
	var out []storage.AlertState
	err := s.eachRow(ctx, "read alert states", "SELECT "+alertStateColumns+" FROM automation_alert_states FINAL "+
		"WHERE ({project:String} = '' OR project_id = {project:String}) AND NOT deleted ORDER BY project_id, automation_id",
		func(rows driver.Rows) error {
			var st storage.AlertState
			if err := rows.Scan(&st.ProjectID, &st.AutomationID, &st.State, &st.Value, &st.Seq, &st.EvaluatedAt, &st.ChangedAt); err != nil {
				return err
			}
			st.EvaluatedAt, st.ChangedAt = st.EvaluatedAt.UTC(), st.ChangedAt.UTC()
			out = append(out, st)
			return nil
		}, clickhouse.Named("project", projectID))
	return out, err
}

// SaveAlertStates implements storage.AlertStore in one INSERT.
func (s *Store) SaveAlertStates(ctx context.Context, states []storage.AlertState) error {
	return s.insertAlertStates(ctx, states, false)
}

func (s *Store) insertAlertStates(ctx context.Context, states []storage.AlertState, deleted bool) error {
	return s.insertBatch(ctx, "automation_alert_states", alertStateColumns+", version, deleted", len(states), func(i int) []any {
		st := states[i]
		return []any{st.ProjectID, st.AutomationID, st.State, st.Value, st.Seq, st.EvaluatedAt.UTC(), st.ChangedAt.UTC(),
			s.versions.next(0), flag(deleted)}
	})
}

// RecordAlertTransition implements storage.AlertStore: the delivery
// first (an id already stored is skipped), then the transition (keyed by
// its number, so a repeat replaces it with itself), then the state. A
// crash part way leaves the old state, and the next evaluation makes the
// same transition again, which adds no second delivery.
func (s *Store) RecordAlertTransition(ctx context.Context, st storage.AlertState, t storage.AlertTransition, d storage.Delivery) error {
	if err := s.AddDeliveries(ctx, []storage.Delivery{d}); err != nil {
		return err
	}
	err := s.insertBatch(ctx, "automation_alert_transitions", "project_id, automation_id, seq, state, value, threshold, changed_at, version, deleted", 1,
		func(int) []any {
			return []any{t.ProjectID, t.AutomationID, t.Seq, t.State, t.Value, t.Threshold, t.At.UTC(), s.versions.next(0), uint8(0)}
		})
	if err != nil {
		return err
	}
	return s.insertAlertStates(ctx, []storage.AlertState{st}, false)
}

// ListAlertTransitions implements storage.AlertStore.
func (s *Store) ListAlertTransitions(ctx context.Context, projectID, automationID string, limit int) ([]storage.AlertTransition, error) {
	out := []storage.AlertTransition{}
	err := s.eachRow(ctx, "read alert transitions", "SELECT project_id, automation_id, seq, state, value, threshold, changed_at "+
		"FROM automation_alert_transitions FINAL WHERE project_id = {project:String} AND automation_id = {automation:String} "+
		"AND NOT deleted ORDER BY seq DESC LIMIT {limit:UInt32}", func(rows driver.Rows) error {
		var t storage.AlertTransition
		if err := rows.Scan(&t.ProjectID, &t.AutomationID, &t.Seq, &t.State, &t.Value, &t.Threshold, &t.At); err != nil {
			return err
		}
		t.At = t.At.UTC()
		out = append(out, t)
		return nil
	}, clickhouse.Named("project", projectID), clickhouse.Named("automation", automationID), clickhouse.Named("limit", uint32(limit)))
	return out, err
}

// deleteAlertState removes an automation's alert state and transitions.
func (s *Store) deleteAlertState(ctx context.Context, projectID, automationID string) error {
	states, err := s.AlertStates(ctx, projectID)
	if err != nil {
		return err
	}
	var mine []storage.AlertState
	for _, st := range states {
		if st.AutomationID == automationID {
			mine = append(mine, st)
		}
	}
	if err := s.insertAlertStates(ctx, mine, true); err != nil {
		return err
	}
	ts, err := s.ListAlertTransitions(ctx, projectID, automationID, 1<<20)
	if err != nil {
		return err
	}
	return s.insertBatch(ctx, "automation_alert_transitions", "project_id, automation_id, seq, state, value, threshold, changed_at, version, deleted", len(ts),
		func(i int) []any {
			t := ts[i]
			return []any{t.ProjectID, t.AutomationID, t.Seq, t.State, t.Value, t.Threshold, t.At.UTC(), s.versions.next(0), uint8(1)}
		})
}

// ClaimLease implements storage.AlertStore. ClickHouse has no row locks,
// so a claim writes this owner's lease and reads it back: of two
// processes claiming at once, the later version wins. Two that read back
// before either write landed may both hold it for one round; the next
// claim settles it, and a transition made twice is written once.
func (s *Store) ClaimLease(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error) {
	now = now.UTC().Truncate(time.Microsecond)
	holder, until, err := s.readLease(ctx, name)
	if err != nil {
		return false, err
	}
	if holder != "" && holder != owner && until.After(now) {
		return false, nil
	}
	if err := s.insertBatch(ctx, "automation_leases", "name, owner, lease_until, version", 1, func(int) []any {
		return []any{name, owner, now.Add(ttl), s.versions.next(0)}
	}); err != nil {
		return false, err
	}
	holder, _, err = s.readLease(ctx, name)
	return holder == owner, err
}

func (s *Store) readLease(ctx context.Context, name string) (string, time.Time, error) {
	var holder string
	var until time.Time
	err := s.eachRow(ctx, "read lease", "SELECT owner, lease_until FROM automation_leases FINAL WHERE name = {name:String}",
		func(rows driver.Rows) error { return rows.Scan(&holder, &until) }, clickhouse.Named("name", name))
	return holder, until, err
}
