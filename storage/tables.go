package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// TableSchemaForInsert is the "table" of /table/create. Each row must be a
// JSON object.
type TableSchemaForInsert struct {
	ProjectID      string            `json:"project_id"`
	Rows           []json.RawMessage `json:"rows"`
	ExpectedDigest *string           `json:"expected_digest,omitempty"`
}

// TableCreateReq is the body of /table/create.
type TableCreateReq struct {
	Table TableSchemaForInsert `json:"table"`
}

// TableCreateRes answers /table/create.
type TableCreateRes struct {
	Digest     string   `json:"digest"`
	RowDigests []string `json:"row_digests"`
}

// TableUpdateSpec is one update of /table/update: exactly one field is set.
type TableUpdateSpec struct {
	Append *TableAppend `json:"append,omitempty"`
	Pop    *TablePop    `json:"pop,omitempty"`
	Insert *TableInsert `json:"insert,omitempty"`
}

// TableAppend adds a row at the end.
type TableAppend struct {
	Row json.RawMessage `json:"row"`
}

// TablePop removes the row at Index (0 <= Index < len).
type TablePop struct {
	Index int64 `json:"index"`
}

// TableInsert adds a row before Index (0 <= Index <= len).
type TableInsert struct {
	Index int64           `json:"index"`
	Row   json.RawMessage `json:"row"`
}

// TableUpdateReq is the body of /table/update. Updates apply in order to a
// copy of the base table; tables themselves never change.
type TableUpdateReq struct {
	ProjectID  string            `json:"project_id"`
	BaseDigest string            `json:"base_digest"`
	Updates    []TableUpdateSpec `json:"updates"`
}

// TableUpdateRes answers /table/update: the new table digest and, per
// update, the appended, inserted or popped row digest.
type TableUpdateRes struct {
	Digest            string   `json:"digest"`
	UpdatedRowDigests []string `json:"updated_row_digests"`
}

// TableCreateFromDigestsReq is the body of /table/create_from_digests.
type TableCreateFromDigestsReq struct {
	ProjectID      string   `json:"project_id"`
	RowDigests     []string `json:"row_digests"`
	ExpectedDigest *string  `json:"expected_digest,omitempty"`
}

// TableCreateFromDigestsRes answers /table/create_from_digests.
type TableCreateFromDigestsRes struct {
	Digest string `json:"digest"`
}

// TableRowFilter narrows /table/query; an empty list filters nothing.
type TableRowFilter struct {
	RowDigests []string `json:"row_digests,omitempty"`
}

// TableQueryReq is the body of /table/query and /table/query_stream.
// SortBy fields are dotted paths into the row value.
type TableQueryReq struct {
	ProjectID string          `json:"project_id"`
	Digest    string          `json:"digest"`
	Filter    *TableRowFilter `json:"filter,omitempty"`
	Limit     *int64          `json:"limit,omitempty"`
	Offset    *int64          `json:"offset,omitempty"`
	SortBy    []SortBy        `json:"sort_by,omitempty"`
}

// TableRowSchema is one row of a table query. OriginalIndex is the row's
// position in the table, whatever the filter and order.
type TableRowSchema struct {
	Digest        string          `json:"digest"`
	Val           json.RawMessage `json:"val"`
	OriginalIndex int64           `json:"original_index"`
}

// TableQueryRes answers /table/query.
type TableQueryRes struct {
	Rows []TableRowSchema `json:"rows"`
}

// TableQueryStatsReq is the body of /table/query_stats.
type TableQueryStatsReq struct {
	ProjectID string `json:"project_id"`
	Digest    string `json:"digest"`
}

// TableQueryStatsRes answers /table/query_stats (0 for unknown tables).
type TableQueryStatsRes struct {
	Count int64 `json:"count"`
}

// TableQueryStatsBatchReq is the body of /table/query_stats_batch.
type TableQueryStatsBatchReq struct {
	ProjectID          string   `json:"project_id"`
	Digests            []string `json:"digests,omitempty"`
	IncludeStorageSize bool     `json:"include_storage_size,omitempty"`
}

// TableStatsRow is one table of a stats batch. StorageSizeBytes is the sum
// of the stored row JSON lengths, set only when requested.
type TableStatsRow struct {
	Digest           string `json:"digest"`
	Count            int64  `json:"count"`
	StorageSizeBytes *int64 `json:"storage_size_bytes,omitempty"`
}

// TableQueryStatsBatchRes answers /table/query_stats_batch: only tables
// that exist, in request order.
type TableQueryStatsBatchRes struct {
	Tables []TableStatsRow `json:"tables"`
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
