package storekit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
)

// PreparedRow is a row ready to store: its digest (sorted-keys text) and
// the text kept (received key order, Python separators).
type PreparedRow struct {
	Digest, Dump string
}

// PrepareRow checks that raw is a JSON object and computes what is stored
// of it.
func PrepareRow(raw json.RawMessage) (PreparedRow, error) {
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return PreparedRow{}, fmt.Errorf("a row must be a JSON object: %w", storage.ErrInvalidArgument)
	}
	sorted, err := digest.Dumps(raw, digest.Options{SortKeys: true})
	if err != nil {
		return PreparedRow{}, fmt.Errorf("%w: %w", storage.ErrInvalidArgument, err)
	}
	kept, err := digest.Dumps(raw, digest.Options{})
	if err != nil {
		return PreparedRow{}, fmt.Errorf("%w: %w", storage.ErrInvalidArgument, err)
	}
	p := PreparedRow{Digest: digest.BytesDigest(sorted.Text), Dump: string(kept.Text)}
	if !kept.Finite {
		// Python's text holds Infinity, which no JSON reader accepts back.
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return PreparedRow{}, fmt.Errorf("%w: %w", storage.ErrInvalidArgument, err)
		}
		p.Dump = b.String()
	}
	return p, nil
}

// UniqueRows keeps the first row of each digest, in order: a bulk insert
// must not name one key twice.
func UniqueRows(rows []PreparedRow) []PreparedRow {
	seen := make(map[string]bool, len(rows))
	unique := rows[:0:0]
	for _, r := range rows {
		if !seen[r.Digest] {
			seen[r.Digest] = true
			unique = append(unique, r)
		}
	}
	return unique
}

// PreparedTable is a /table/create request ready to store: the rows, the
// table's row digest list and its digest.
type PreparedTable struct {
	Rows       []PreparedRow
	RowDigests []string
	Digest     string
}

// PrepareTable checks t and computes its digests; a client digest that
// differs is ErrConflict.
func PrepareTable(t storage.TableSchemaForInsert) (PreparedTable, error) {
	if t.ProjectID == "" {
		return PreparedTable{}, fmt.Errorf("table.project_id is required: %w", storage.ErrInvalidArgument)
	}
	p := PreparedTable{Rows: make([]PreparedRow, len(t.Rows)), RowDigests: make([]string, len(t.Rows))}
	for i, raw := range t.Rows {
		r, err := PrepareRow(raw)
		if err != nil {
			return PreparedTable{}, fmt.Errorf("table.rows[%d]: %w", i, err)
		}
		p.Rows[i], p.RowDigests[i] = r, r.Digest
	}
	p.Digest = digest.TableDigest(p.RowDigests)
	if err := storage.CheckExpectedDigest("table", t.ExpectedDigest, p.Digest); err != nil {
		return PreparedTable{}, err
	}
	return p, nil
}

// TableFromDigests computes the digest of a /table/create_from_digests
// table. Rows are not checked, as in the reference; queries skip digests
// never stored.
func TableFromDigests(req storage.TableCreateFromDigestsReq) (string, error) {
	d := digest.TableDigest(req.RowDigests)
	return d, storage.CheckExpectedDigest("table", req.ExpectedDigest, d)
}

// TableUpdate is what a /table/update writes: the new rows, the new
// table's row digest list, and the answer.
type TableUpdate struct {
	Rows       []PreparedRow
	RowDigests []string
	Res        storage.TableUpdateRes
}

// PlanTableUpdate applies req's updates to a copy of base, the row digest
// list of the base table; found is false when no such table is stored.
func PlanTableUpdate(req storage.TableUpdateReq, base []string, found bool) (TableUpdate, error) {
	if !found {
		return TableUpdate{}, fmt.Errorf("table %s not found; create it first or use a stored base_digest: %w",
			req.BaseDigest, storage.ErrNotFound)
	}
	u := TableUpdate{RowDigests: append([]string{}, base...), Res: storage.TableUpdateRes{UpdatedRowDigests: []string{}}}
	for i, spec := range req.Updates {
		var touched string
		var row *PreparedRow
		var err error
		if u.RowDigests, touched, row, err = applyUpdate(u.RowDigests, spec); err != nil {
			return TableUpdate{}, fmt.Errorf("updates[%d]: %w", i, err)
		}
		u.Res.UpdatedRowDigests = append(u.Res.UpdatedRowDigests, touched)
		if row != nil {
			u.Rows = append(u.Rows, *row)
		}
	}
	u.Res.Digest = digest.TableDigest(u.RowDigests)
	return u, nil
}

func applyUpdate(list []string, u storage.TableUpdateSpec) ([]string, string, *PreparedRow, error) {
	set := 0
	for _, present := range []bool{u.Append != nil, u.Pop != nil, u.Insert != nil} {
		if present {
			set++
		}
	}
	if set != 1 {
		return nil, "", nil, fmt.Errorf("set exactly one of append, pop or insert: %w", storage.ErrInvalidArgument)
	}
	n := int64(len(list))
	if u.Pop != nil {
		if u.Pop.Index < 0 || u.Pop.Index >= n {
			return nil, "", nil, fmt.Errorf("pop: Index out of range: %d not in [0, %d): %w", u.Pop.Index, n, storage.ErrInvalidArgument)
		}
		popped := list[u.Pop.Index]
		return slices.Delete(list, int(u.Pop.Index), int(u.Pop.Index)+1), popped, nil, nil
	}
	row, at := json.RawMessage(nil), n
	if u.Append != nil {
		row = u.Append.Row
	} else {
		row, at = u.Insert.Row, u.Insert.Index
		if at < 0 || at > n {
			return nil, "", nil, fmt.Errorf("insert: Index out of range: %d not in [0, %d]: %w", at, n, storage.ErrInvalidArgument)
		}
	}
	p, err := PrepareRow(row)
	if err != nil {
		return nil, "", nil, err
	}
	return slices.Insert(list, int(at), p.Digest), p.Digest, &p, nil
}
