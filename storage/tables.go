package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// TableSchemaForInsert is a table to create. Each row must be a
// JSON object.
type TableSchemaForInsert struct {
	ProjectID      string
	Rows           []json.RawMessage
	ExpectedDigest *string
}

// TableCreateReq asks to create a table.
type TableCreateReq struct {
	Table TableSchemaForInsert
}

// TableCreateRes is the created table and its row digests.
type TableCreateRes struct {
	Digest     string
	RowDigests []string
}

// TableUpdateSpec is one update of a table: exactly one field is set.
type TableUpdateSpec struct {
	Append *TableAppend
	Pop    *TablePop
	Insert *TableInsert
}

// TableAppend adds a row at the end.
type TableAppend struct {
	Row json.RawMessage
}

// TablePop removes the row at Index (0 <= Index < len).
type TablePop struct {
	Index int64
}

// TableInsert adds a row before Index (0 <= Index <= len).
type TableInsert struct {
	Index int64
	Row   json.RawMessage
}

// TableUpdateReq derives a table from another. Updates apply in order to a
// copy of the base table; tables themselves never change.
type TableUpdateReq struct {
	ProjectID  string
	BaseDigest string
	Updates    []TableUpdateSpec
}

// TableUpdateRes is the derived table: its digest and, per
// update, the appended, inserted or popped row digest.
type TableUpdateRes struct {
	Digest            string
	UpdatedRowDigests []string
}

// TableCreateFromDigestsReq creates a table of rows stored already.
type TableCreateFromDigestsReq struct {
	ProjectID      string
	RowDigests     []string
	ExpectedDigest *string
}

// TableCreateFromDigestsRes is the created table.
type TableCreateFromDigestsRes struct {
	Digest string
}

// TableRowFilter narrows a table query; an empty list filters nothing.
type TableRowFilter struct {
	RowDigests []string
}

// TableQueryReq reads the rows of a table.
// SortBy fields are dotted paths into the row value.
type TableQueryReq struct {
	ProjectID string
	Digest    string
	Filter    *TableRowFilter
	Limit     *int64
	Offset    *int64
	SortBy    []SortBy
}

// TableRowSchema is one row of a table query. OriginalIndex is the row's
// position in the table, whatever the filter and order.
type TableRowSchema struct {
	Digest        string
	Val           json.RawMessage
	OriginalIndex int64
}

// TableQueryRes is the rows a table query found.
type TableQueryRes struct {
	Rows []TableRowSchema
}

// TableQueryStatsReq counts the rows of a table.
type TableQueryStatsReq struct {
	ProjectID string
	Digest    string
}

// TableQueryStatsRes is a table's row count (0 for unknown tables).
type TableQueryStatsRes struct {
	Count int64
}

// TableQueryStatsBatchReq counts the rows of several tables.
type TableQueryStatsBatchReq struct {
	ProjectID          string
	Digests            []string
	IncludeStorageSize bool
}

// TableStatsRow is one table of a stats batch. StorageSizeBytes is the sum
// of the stored row JSON lengths, set only when requested.
type TableStatsRow struct {
	Digest           string
	Count            int64
	StorageSizeBytes *int64
}

// TableQueryStatsBatchRes holds the stats of the batch: only tables
// that exist, in request order.
type TableQueryStatsBatchRes struct {
	Tables []TableStatsRow
}

// TableStore keeps content-addressed rows and immutable tables (ordered
// row-digest lists) per project. Every request names its project and no
// method reads another project's rows. Bad input wraps ErrInvalidArgument,
// an expected_digest mismatch ErrConflict, an unknown base table of an
// update ErrNotFound.
type TableStore interface {
	CreateTable(ctx context.Context, req TableCreateReq) (TableCreateRes, error)
	UpdateTable(ctx context.Context, req TableUpdateReq) (TableUpdateRes, error)
	CreateTableFromDigests(ctx context.Context, req TableCreateFromDigestsReq) (TableCreateFromDigestsRes, error)
	// QueryTable returns no rows for an unknown table; row digests listed
	// by a table but never stored are skipped.
	QueryTable(ctx context.Context, req TableQueryReq) (TableQueryRes, error)
	QueryTableStats(ctx context.Context, req TableQueryStatsReq) (TableQueryStatsRes, error)
	QueryTableStatsBatch(ctx context.Context, req TableQueryStatsBatchReq) (TableQueryStatsBatchRes, error)
}

// CheckExpectedDigest compares a client-computed digest with the server's.
func CheckExpectedDigest(what string, expected *string, actual string) error {
	if expected == nil || *expected == actual {
		return nil
	}
	return fmt.Errorf("%s: expected_digest %s differs from the server digest %s; send the value the digest was computed from, or omit expected_digest: %w",
		what, *expected, actual, ErrConflict)
}

// TableSortPath splits a table sort field into its dotted path, refusing
// empty fields and empty segments (leading, trailing or double dots).
func TableSortPath(field string) ([]string, error) {
	parts := strings.Split(field, ".")
	for _, p := range parts {
		if strings.TrimSpace(p) == "" {
			return nil, fmt.Errorf("sort_by field %q is invalid: use a dotted path of non-empty names such as \"a.b\": %w",
				field, ErrInvalidArgument)
		}
	}
	return parts, nil
}

// PageBounds checks limit and offset: nil means none, a negative limit
// means none (as the reference treats it), a negative offset is refused.
func PageBounds(limit, offset *int64) (lim, off int64, err error) {
	lim = -1
	if limit != nil && *limit >= 0 {
		lim = *limit
	}
	if offset != nil {
		if *offset < 0 {
			return 0, 0, fmt.Errorf("offset %d is negative; use 0 or more: %w", *offset, ErrInvalidArgument)
		}
		off = *offset
	}
	return lim, off, nil
}
