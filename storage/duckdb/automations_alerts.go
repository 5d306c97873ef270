package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

const alertStateColumns = "project_id, automation_id, state, value, seq, evaluated_at, changed_at"

// upsertAlertStates is the statement that stores n alert states.
func upsertAlertStates(n int) string {
	return `INSERT INTO automation_alert_states (` + alertStateColumns + `) VALUES ` + rowsOf("("+qmarks(7)+")", n) +
		` ON CONFLICT (project_id, automation_id) DO UPDATE SET state = excluded.state, value = excluded.value,
		seq = excluded.seq, evaluated_at = excluded.evaluated_at, changed_at = excluded.changed_at`
}

// AlertAutomations implements storage.AlertStore.
func (s *Store) AlertAutomations(ctx context.Context, limit int) ([]storage.Automation, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+storekit.AutomationColumns+` FROM automations
		WHERE event = ? AND enabled ORDER BY project_id, id LIMIT ?`, storage.EventCallAlert, limit)
	if err != nil {
		return nil, fmt.Errorf("read alert automations: %w", err)
	}
	return scanAutomations(rows)
}

// AlertStates implements storage.AlertStore.
func (s *Store) AlertStates(ctx context.Context, projectID string) ([]storage.AlertState, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+alertStateColumns+` FROM automation_alert_states
		WHERE ? = '' OR project_id = ? ORDER BY project_id, automation_id`, projectID, projectID)
	if err != nil {
		return nil, fmt.Errorf("read alert states: %w", err)
	}
	return collectRows(rows, "read alert states", func(rows *sql.Rows) (storage.AlertState, error) {
		var st storage.AlertState
		err := rows.Scan(&st.ProjectID, &st.AutomationID, &st.State, &st.Value, &st.Seq, &st.EvaluatedAt, &st.ChangedAt)
		st.EvaluatedAt, st.ChangedAt = st.EvaluatedAt.UTC(), st.ChangedAt.UTC()
		return st, err
	})
}

// SaveAlertStates implements storage.AlertStore, one statement per chunk.
func (s *Store) SaveAlertStates(ctx context.Context, states []storage.AlertState) error {
	if len(states) == 0 {
		return nil
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		for chunk := range slices.Chunk(states, deliveryChunk) {
			if err := saveAlertStates(ctx, tx, chunk); err != nil {
				return err
			}
		}
		return nil
	})
}

func saveAlertStates(ctx context.Context, tx *sql.Tx, states []storage.AlertState) error {
	args := make([]any, 0, len(states)*7)
	for _, st := range states {
		args = append(args, st.ProjectID, st.AutomationID, st.State, st.Value, st.Seq, st.EvaluatedAt, st.ChangedAt)
	}
	if _, err := tx.ExecContext(ctx, upsertAlertStates(len(states)), args...); err != nil {
		return fmt.Errorf("save alert states: %w", err)
	}
	return nil
}

// RecordAlertTransition implements storage.AlertStore in one transaction.
func (s *Store) RecordAlertTransition(ctx context.Context, st storage.AlertState, t storage.AlertTransition, d storage.Delivery) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := saveAlertStates(ctx, tx, []storage.AlertState{st}); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO automation_alert_transitions
			(project_id, automation_id, seq, state, value, threshold, changed_at) VALUES (`+qmarks(7)+`)
			ON CONFLICT (project_id, automation_id, seq) DO NOTHING`,
			t.ProjectID, t.AutomationID, t.Seq, t.State, t.Value, t.Threshold, t.At); err != nil {
			return fmt.Errorf("record alert transition: %w", err)
		}
		return insertDeliveries(ctx, tx, []storage.Delivery{d})
	})
}

// ListAlertTransitions implements storage.AlertStore.
func (s *Store) ListAlertTransitions(ctx context.Context, projectID, automationID string, limit int) ([]storage.AlertTransition, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT project_id, automation_id, seq, state, value, threshold, changed_at
		FROM automation_alert_transitions WHERE project_id = ? AND automation_id = ? ORDER BY seq DESC LIMIT ?`,
		projectID, automationID, limit)
	if err != nil {
		return nil, fmt.Errorf("read alert transitions: %w", err)
	}
	defer rows.Close()
	out := []storage.AlertTransition{}
	for rows.Next() {
		var t storage.AlertTransition
		if err := rows.Scan(&t.ProjectID, &t.AutomationID, &t.Seq, &t.State, &t.Value, &t.Threshold, &t.At); err != nil {
			return nil, fmt.Errorf("read alert transitions: %w", err)
		}
		t.At = t.At.UTC()
		out = append(out, t)
	}
	return out, rows.Err()
}

// ClaimLease implements storage.AlertStore under the write lock: an
// embedded store has one process, so the lease only matters when its
// owner changes (a restart).
func (s *Store) ClaimLease(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error) {
	won := false
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var holder string
		var until time.Time
		err := tx.QueryRowContext(ctx, `SELECT owner, lease_until FROM automation_leases WHERE name = ?`, name).Scan(&holder, &until)
		switch {
		case err == nil && holder != owner && until.After(now):
			return nil
		case err != nil && err != sql.ErrNoRows:
			return fmt.Errorf("read lease %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO automation_leases (name, owner, lease_until) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until`,
			name, owner, now.Add(ttl)); err != nil {
			return fmt.Errorf("claim lease %s: %w", name, err)
		}
		won = true
		return nil
	})
	return won, err
}
