package storekit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/weftdev/weft/storage"
)

// TableEntry is one position of a table: its original index and digest,
// and the row text once fetched ("" while not, or when never stored).
type TableEntry struct {
	Index  int64
	Digest string
	Val    string
}

// TablePages reads a table's rows for QueryTable. Both methods fill Val
// of every entry whose row is stored and leave the others "".
type TablePages interface {
	// NaturalPage reads the entries at [offset, offset+limit) of the
	// table's row list (limit < 0: to its end); no entries when the table
	// is not stored.
	NaturalPage(ctx context.Context, projectID, tableDigest string, offset, limit int64) ([]TableEntry, error)
	// FilteredEntries reads, in table order, the entries of req's table
	// that SelectEntries keeps under req.Filter.
	FilteredEntries(ctx context.Context, req storage.TableQueryReq) ([]TableEntry, error)
}

// QueryTable answers storage.TableStore.QueryTable. In table order only
// the page is read; a filter or sort reads the whole list. Digests listed
// but never stored do not count toward the page, so a natural page with
// a hole is cut again from the whole list.
func QueryTable(ctx context.Context, pages TablePages, req storage.TableQueryReq) (storage.TableQueryRes, error) {
	limit, offset, err := storage.PageBounds(req.Limit, req.Offset)
	if err != nil {
		return storage.TableQueryRes{}, err
	}
	keys, err := tableSortKeys(req.SortBy)
	if err != nil {
		return storage.TableQueryRes{}, err
	}
	var rows []TableEntry
	if len(keys) == 0 && (req.Filter == nil || len(req.Filter.RowDigests) == 0) {
		rows, err = pages.NaturalPage(ctx, req.ProjectID, req.Digest, offset, limit)
		if err == nil && slices.ContainsFunc(rows, unstored) {
			rows, err = selectedPage(ctx, pages, storage.TableQueryReq{ProjectID: req.ProjectID, Digest: req.Digest}, nil, offset, limit)
		}
	} else {
		rows, err = selectedPage(ctx, pages, req, keys, offset, limit)
	}
	if err != nil {
		return storage.TableQueryRes{}, err
	}
	res := storage.TableQueryRes{Rows: make([]storage.TableRowSchema, len(rows))}
	for i, e := range rows {
		res.Rows[i] = storage.TableRowSchema{Digest: e.Digest, Val: json.RawMessage(e.Val), OriginalIndex: e.Index}
	}
	return res, nil
}

// selectedPage reads every listed row that passes the filter, sorts and
// cuts the page.
func selectedPage(ctx context.Context, pages TablePages, req storage.TableQueryReq, keys []rowSortKey, offset, limit int64) ([]TableEntry, error) {
	entries, err := pages.FilteredEntries(ctx, req)
	if err != nil {
		return nil, err
	}
	entries = slices.DeleteFunc(entries, unstored)
	sortEntries(entries, keys)
	return pageOf(entries, offset, limit), nil
}

func unstored(e TableEntry) bool { return e.Val == "" }

// PageEntries numbers the digests of a page starting at offset.
func PageEntries(digests []string, offset int64) []TableEntry {
	page := make([]TableEntry, len(digests))
	for i, d := range digests {
		page[i] = TableEntry{Index: offset + int64(i), Digest: d}
	}
	return page
}

// SelectEntries numbers a table's digests and keeps those f names (all
// when f names none).
func SelectEntries(digests []string, f *storage.TableRowFilter) []TableEntry {
	var keep map[string]bool
	if f != nil && len(f.RowDigests) > 0 {
		keep = make(map[string]bool, len(f.RowDigests))
		for _, d := range f.RowDigests {
			keep[d] = true
		}
	}
	entries := make([]TableEntry, 0, len(digests))
	for i, d := range digests {
		if keep == nil || keep[d] {
			entries = append(entries, TableEntry{Index: int64(i), Digest: d})
		}
	}
	return entries
}

// FillEntries sets Val of every entry whose digest vals holds.
func FillEntries(entries []TableEntry, vals map[string]string) {
	for i := range entries {
		entries[i].Val = vals[entries[i].Digest]
	}
}

// EntryDigests lists the digests of entries.
func EntryDigests(entries []TableEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Digest
	}
	return out
}

func pageOf[T any](all []T, offset, limit int64) []T {
	if offset >= int64(len(all)) {
		return nil
	}
	all = all[offset:]
	if limit >= 0 && limit < int64(len(all)) {
		all = all[:limit]
	}
	return all
}

// StatsInOrder lists the stats found of the tables asked for, in request
// order, leaving out tables not stored.
func StatsInOrder(digests []string, found map[string]storage.TableStatsRow) storage.TableQueryStatsBatchRes {
	res := storage.TableQueryStatsBatchRes{Tables: []storage.TableStatsRow{}}
	for _, d := range digests {
		if r, ok := found[d]; ok {
			res.Tables = append(res.Tables, r)
		}
	}
	return res
}

// rowSortKey is one parsed sort_by term of a table query.
type rowSortKey struct {
	path []string
	desc bool
}

func tableSortKeys(sortBy []storage.SortBy) ([]rowSortKey, error) {
	keys := make([]rowSortKey, 0, len(sortBy))
	for _, sb := range sortBy {
		path, err := storage.TableSortPath(sb.Field)
		if err != nil {
			return nil, err
		}
		dir := strings.ToLower(sb.Direction)
		if dir != "asc" && dir != "desc" {
			return nil, fmt.Errorf("sort_by direction %q for %q: use asc or desc: %w", sb.Direction, sb.Field, storage.ErrInvalidArgument)
		}
		keys = append(keys, rowSortKey{path: path, desc: dir == "desc"})
	}
	return keys, nil
}
