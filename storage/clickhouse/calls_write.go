package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage"
)

// WriteCallOps implements storage.CallWriter. The ops, whose parts of one
// call the caller has already merged (storage.MergeOps), are applied in
// order to an in-memory view of the calls they touch (their stored rows,
// read first), and the outcome is written as one INSERT of one new version
// per changed call: a re-sent batch changes nothing and writes nothing.
// ClickHouse has no multi-statement transactions; one INSERT is as atomic
// as it gets (atomic per partition), and a retry of a failed write merges
// to the same rows.
func (s *Store) WriteCallOps(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	unlock := s.projects.lock(opProjects(ops))
	defer unlock()
	w := newCallWrite(s)
	if err := w.load(ctx, partKeys(ops)); err != nil {
		return nil, err
	}
	out := make([]storage.CallOpResult, len(ops))
	for i, op := range ops {
		switch {
		case op.Part != nil:
			w.applyPart(op.Part)
		case op.Update != nil:
			w.applyUpdate(op.Update)
		case op.Delete != nil:
			n, err := w.applyDelete(ctx, op.Delete)
			if err != nil {
				return nil, err
			}
			out[i].NumDeleted = n
		}
	}
	if err := s.insertRows(ctx, w.changed()); err != nil {
		return nil, err
	}
	return out, nil
}

func opProjects(ops []storage.CallOp) []string {
	var out []string
	for _, op := range ops {
		switch {
		case op.Part != nil:
			out = append(out, op.Part.Call.ProjectID)
		case op.Update != nil:
			out = append(out, op.Update.ProjectID)
		case op.Delete != nil:
			out = append(out, op.Delete.ProjectID)
		}
	}
	return out
}

// partKeys lists the calls whose stored rows the parts and updates need;
// deletes load what they reach themselves.
func partKeys(ops []storage.CallOp) []callKey {
	var out []callKey
	for _, op := range ops {
		switch {
		case op.Part != nil:
			out = append(out, callKey{op.Part.Call.ProjectID, op.Part.Call.ID})
		case op.Update != nil:
			out = append(out, callKey{op.Update.ProjectID, op.Update.ID})
		}
	}
	return out
}

type callKey struct{ project, id string }

// callWrite is the in-memory view of one WriteCallOps: the current state
// of every call it touched, and the stored version each started from.
type callWrite struct {
	s      *Store
	rows   map[callKey]*callRow // current state; absent = no such call
	stored map[callKey]callRow  // as read from the table
	loaded map[callKey]bool     // looked up (found or not)
	order  []callKey            // first touch, for a stable insert order
}

func newCallWrite(s *Store) *callWrite {
	return &callWrite{s: s, rows: map[callKey]*callRow{}, stored: map[callKey]callRow{}, loaded: map[callKey]bool{}}
}

// track records a stored row read from the table, unless the write
// already holds a newer state of that call.
func (w *callWrite) track(r callRow) {
	k := callKey{r.call.ProjectID, r.call.ID}
	w.loaded[k] = true
	if _, ok := w.rows[k]; ok {
		return
	}
	w.stored[k] = r
	cur := r
	w.rows[k] = &cur
	w.order = append(w.order, k)
}

// applyPart merges a part into the call's row with storage.FoldPart, so a
// side present in the part replaces that side and the other is kept. A new
// call's anchor is its start time, else its end time.
func (w *callWrite) applyPart(p *storage.CallPart) {
	part := storage.CallPart{Kind: p.Kind, Call: normalizeCall(p.Call)}
	k := callKey{part.Call.ProjectID, part.Call.ID}
	cur, ok := w.rows[k]
	if !ok {
		part.Call.DeletedAt = nil
		w.rows[k] = &callRow{call: part.Call, hasStart: part.Kind.HasStart(), hasEnd: part.Kind.HasEnd(),
			anchorAt: w.anchor(&part)}
		w.order = append(w.order, k)
		return
	}
	prev := storage.CallPart{Kind: cur.kind(), Call: cur.call}
	storage.FoldPart(&prev, &part)
	if cur.renamed { // a rename outlives a start that comes after it
		prev.Call.DisplayName = cur.call.DisplayName
	}
	cur.call = prev.Call
	cur.hasStart, cur.hasEnd = prev.Kind.HasStart(), prev.Kind.HasEnd()
}

func (w *callWrite) anchor(p *storage.CallPart) time.Time {
	switch {
	case p.Kind.HasStart() && !p.Call.StartedAt.IsZero():
		return p.Call.StartedAt
	case p.Kind.HasEnd() && p.Call.EndedAt != nil:
		return *p.Call.EndedAt
	}
	return w.s.opts.Now().UTC().Truncate(time.Microsecond)
}

// applyUpdate renames a live call. A call with no row yet (its start is
// still on the way) gets a row holding the name, which the start merges
// into; a deleted call stays as it is.
func (w *callWrite) applyUpdate(u *storage.CallUpdate) {
	cur, ok := w.rows[callKey{u.ProjectID, u.ID}]
	if !ok {
		cur = w.pending(u.ProjectID, u.ID)
	}
	if cur.call.DeletedAt == nil {
		cur.call.DisplayName, cur.renamed = u.DisplayName, true
	}
}

// pending adds the row of a call none of whose parts has arrived, for an
// update or a delete that came first. It is anchored now: readers skip it
// until its start lands, and retention ages it out if none ever does.
func (w *callWrite) pending(project, id string) *callRow {
	k := callKey{project, id}
	r := &callRow{call: storage.Call{ProjectID: project, ID: id}, anchorAt: w.s.opts.Now().UTC().Truncate(time.Microsecond)}
	w.rows[k] = r
	w.order = append(w.order, k)
	return r
}

// changed returns the rows to insert, each with its new version and
// expiry: new calls and calls whose row differs from the stored one.
func (w *callWrite) changed() []*callRow {
	var out []*callRow
	for _, k := range w.order {
		cur := w.rows[k]
		cur.expireAt = w.s.expireAt(k.project, cur.anchorAt)
		prev, wasStored := w.stored[k]
		if wasStored && sameRow(&prev, cur) {
			continue
		}
		cur.version = w.s.versions.next(prev.version)
		out = append(out, cur)
	}
	return out
}

// expireAt is when a call anchored at anchor expires, nil to keep it.
func (s *Store) expireAt(project string, anchor time.Time) *time.Time {
	if s.opts.Retention == nil {
		return nil
	}
	keep := s.opts.Retention(project, anchor)
	if keep <= 0 {
		return nil
	}
	t := anchor.Add(keep).Truncate(time.Second)
	return &t
}

// insertRows writes rows as one INSERT.
func (s *Store) insertRows(ctx context.Context, rows []*callRow) error {
	if len(rows) == 0 {
		return nil
	}
	b, err := s.conn.PrepareBatch(ctx, "INSERT INTO calls ("+rowColumnList+")")
	if err != nil {
		return wrapErr("prepare calls insert", err)
	}
	for _, r := range rows {
		if err := b.Append(r.values()...); err != nil {
			_ = b.Abort()
			return fmt.Errorf("clickhouse insert call %s: %w", r.call.ID, err)
		}
	}
	return wrapErr("insert calls", b.Send())
}

// groupByProject splits keys by project, keeping each project's ids
// unique and in first-seen order.
func groupByProject(keys []callKey) map[string][]string {
	out := map[string][]string{}
	seen := make(map[callKey]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out[k.project] = append(out[k.project], k.id)
		}
	}
	return out
}
