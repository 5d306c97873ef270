package clickhouse

import (
	"context"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
)

const monitorCallColumns = "project_id, call_id, queued_at, attempts, next_at"

// EnqueueMonitorCalls implements storage.MonitorStore: calls already
// queued are left out of the INSERT. Two writers queuing the same call at
// once may both write it; the later row wins, which only moves the call
// back in the queue.
func (s *Store) EnqueueMonitorCalls(ctx context.Context, calls []storage.MonitorCall) error {
	byProject := map[string][]string{}
	for _, c := range calls {
		byProject[c.ProjectID] = append(byProject[c.ProjectID], c.CallID)
	}
	queued := map[[2]string]bool{}
	for project, ids := range byProject {
		for _, chunk := range chunks(ids) {
			err := s.eachRow(ctx, "read monitor queue", `SELECT call_id FROM monitor_calls FINAL
				WHERE project_id = {project:String} AND call_id IN {ids:Array(String)} AND NOT deleted`, func(rows driver.Rows) error {
				var id string
				err := rows.Scan(&id)
				queued[[2]string{project, id}] = true
				return err
			}, clickhouse.Named("project", project), clickhouse.Named("ids", chunk))
			if err != nil {
				return err
			}
		}
	}
	fresh := make([]storage.MonitorCall, 0, len(calls))
	for _, c := range calls {
		if k := [2]string{c.ProjectID, c.CallID}; !queued[k] {
			queued[k] = true
			fresh = append(fresh, c)
		}
	}
	return s.insertMonitorCalls(ctx, fresh, false)
}

// DeferMonitorCalls implements storage.MonitorStore.
func (s *Store) DeferMonitorCalls(ctx context.Context, calls []storage.MonitorCall) error {
	return s.insertMonitorCalls(ctx, calls, false)
}

// RemoveMonitorCalls implements storage.MonitorStore.
func (s *Store) RemoveMonitorCalls(ctx context.Context, calls []storage.MonitorCall) error {
	return s.insertMonitorCalls(ctx, calls, true)
}

func (s *Store) insertMonitorCalls(ctx context.Context, calls []storage.MonitorCall, deleted bool) error {
	return s.insertBatch(ctx, "monitor_calls", monitorCallColumns+", version, deleted", len(calls), func(i int) []any {
		c := calls[i]
		return []any{c.ProjectID, c.CallID, c.QueuedAt.UTC(), int32(c.Attempts), c.NextAt.UTC(), s.versions.next(0), flag(deleted)}
	})
}

// PendingMonitorCalls implements storage.MonitorStore.
func (s *Store) PendingMonitorCalls(ctx context.Context, now time.Time, limit int) ([]storage.MonitorCall, error) {
	var out []storage.MonitorCall
	err := s.eachRow(ctx, "read monitor queue", "SELECT "+monitorCallColumns+` FROM monitor_calls FINAL
		WHERE NOT deleted AND next_at <= {now:DateTime64(6, 'UTC')} ORDER BY queued_at, project_id, call_id LIMIT {limit:UInt32}`,
		func(rows driver.Rows) error {
			var c storage.MonitorCall
			var attempts int32
			if err := rows.Scan(&c.ProjectID, &c.CallID, &c.QueuedAt, &attempts, &c.NextAt); err != nil {
				return err
			}
			c.Attempts, c.QueuedAt, c.NextAt = int(attempts), c.QueuedAt.UTC(), c.NextAt.UTC()
			out = append(out, c)
			return nil
		}, clickhouse.Named("now", now.UTC()), clickhouse.Named("limit", uint32(limit)))
	return out, err
}

const monitorResultColumns = "project_id, call_id, scorer_ref, monitor, monitor_ref, status, message, cost_usd, scored_at"

// RecordMonitorResults implements storage.MonitorStore.
func (s *Store) RecordMonitorResults(ctx context.Context, results []storage.MonitorResult) error {
	return s.insertBatch(ctx, "monitor_results", monitorResultColumns+", version", len(results), func(i int) []any {
		r := results[i]
		return []any{r.ProjectID, r.CallID, r.ScorerRef, r.Monitor, r.MonitorRef, r.Status, r.Message, r.CostUSD, r.At.UTC(), s.versions.next(0)}
	})
}

// MonitorResults implements storage.MonitorStore.
func (s *Store) MonitorResults(ctx context.Context, projectID string, callIDs []string) ([]storage.MonitorResult, error) {
	var out []storage.MonitorResult
	for _, chunk := range chunks(callIDs) {
		err := s.eachRow(ctx, "read monitor results", "SELECT "+monitorResultColumns+` FROM monitor_results FINAL
			WHERE project_id = {project:String} AND call_id IN {ids:Array(String)} ORDER BY call_id, scorer_ref`,
			func(rows driver.Rows) error { return scanMonitorResult(rows, &out) },
			clickhouse.Named("project", projectID), clickhouse.Named("ids", chunk))
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MonitorFailures implements storage.MonitorStore.
func (s *Store) MonitorFailures(ctx context.Context, projectID string, limit int) ([]storage.MonitorResult, error) {
	var out []storage.MonitorResult
	err := s.eachRow(ctx, "read monitor failures", "SELECT "+monitorResultColumns+` FROM monitor_results FINAL
		WHERE project_id = {project:String} AND status <> {scored:String} ORDER BY scored_at DESC, call_id LIMIT {limit:UInt32}`,
		func(rows driver.Rows) error { return scanMonitorResult(rows, &out) },
		clickhouse.Named("project", projectID), clickhouse.Named("scored", storage.MonitorScored), clickhouse.Named("limit", uint32(limit)))
	return out, err
}

func scanMonitorResult(rows driver.Rows, out *[]storage.MonitorResult) error {
	var r storage.MonitorResult
	if err := rows.Scan(&r.ProjectID, &r.CallID, &r.ScorerRef, &r.Monitor, &r.MonitorRef, &r.Status, &r.Message, &r.CostUSD, &r.At); err != nil {
		return err
	}
	r.At = r.At.UTC()
	*out = append(*out, r)
	return nil
}

// MonitorStats implements storage.MonitorStore.
func (s *Store) MonitorStats(ctx context.Context, projectID string, since time.Time) ([]storage.MonitorStats, error) {
	var out []storage.MonitorStats
	err := s.eachRow(ctx, "read monitor stats", `SELECT monitor, countIf(status = {scored:String}), countIf(status = {failed:String}),
			countIf(status = {skipped:String}), sum(cost_usd), max(scored_at)
		FROM monitor_results FINAL WHERE project_id = {project:String} AND scored_at >= {since:DateTime64(6, 'UTC')}
		GROUP BY monitor ORDER BY monitor`, func(rows driver.Rows) error {
		var st storage.MonitorStats
		var scored, failed, skipped uint64
		var last time.Time
		if err := rows.Scan(&st.Monitor, &scored, &failed, &skipped, &st.CostUSD, &last); err != nil {
			return err
		}
		st.Scored, st.Failed, st.Skipped = int64(scored), int64(failed), int64(skipped)
		last = last.UTC()
		st.LastAt = &last
		out = append(out, st)
		return nil
	}, clickhouse.Named("project", projectID), clickhouse.Named("since", since.UTC()), clickhouse.Named("scored", storage.MonitorScored),
		clickhouse.Named("failed", storage.MonitorFailed), clickhouse.Named("skipped", storage.MonitorSkipped))
	return out, err
}

// ProjectsWithObjectClass implements storage.MonitorStore.
func (s *Store) ProjectsWithObjectClass(ctx context.Context, baseClass string, limit int) ([]string, error) {
	return s.stringColumn(ctx, "read projects by object class", `SELECT DISTINCT project_id FROM object_versions FINAL
		WHERE base_object_class = {class:String} AND deleted_at IS NULL ORDER BY project_id LIMIT {limit:UInt32}`,
		clickhouse.Named("class", baseClass), clickhouse.Named("limit", uint32(limit)))
}
