package wire

import (
	"encoding/json"

	"github.com/weftdev/weft/storage"
)

// TableSchemaForInsert is the "table" of /table/create. Each row must be a
// JSON object.
type TableSchemaForInsert struct {
	ProjectID      string            `json:"project_id"`
	Rows           []json.RawMessage `json:"rows"`
	ExpectedDigest *string           `json:"expected_digest,omitempty"`
}

// Storage converts the table to its storage form.
func (t TableSchemaForInsert) Storage() storage.TableSchemaForInsert {
	return storage.TableSchemaForInsert(t)
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

// TablePop removes the row at Index.
type TablePop struct {
	Index int64 `json:"index"`
}

// TableInsert adds a row before Index.
type TableInsert struct {
	Index int64           `json:"index"`
	Row   json.RawMessage `json:"row"`
}

// StorageUpdates converts table updates to their storage form.
func StorageUpdates(specs []TableUpdateSpec) []storage.TableUpdateSpec {
	if specs == nil {
		return nil
	}
	out := make([]storage.TableUpdateSpec, len(specs))
	for i, s := range specs {
		if s.Append != nil {
			out[i].Append = &storage.TableAppend{Row: s.Append.Row}
		}
		if s.Pop != nil {
			out[i].Pop = &storage.TablePop{Index: s.Pop.Index}
		}
		if s.Insert != nil {
			out[i].Insert = &storage.TableInsert{Index: s.Insert.Index, Row: s.Insert.Row}
		}
	}
	return out
}

// TableUpdateRes answers /table/update.
type TableUpdateRes struct {
	Digest            string   `json:"digest"`
	UpdatedRowDigests []string `json:"updated_row_digests"`
}

// TableCreateFromDigestsRes answers /table/create_from_digests.
type TableCreateFromDigestsRes struct {
	Digest string `json:"digest"`
}

// TableRowFilter narrows /table/query; an empty list filters nothing.
type TableRowFilter struct {
	RowDigests []string `json:"row_digests,omitempty"`
}

// Storage converts the filter to its storage form; nil stays nil.
func (f *TableRowFilter) Storage() *storage.TableRowFilter {
	if f == nil {
		return nil
	}
	return &storage.TableRowFilter{RowDigests: f.RowDigests}
}

// TableRowSchema is one row of a table query.
type TableRowSchema struct {
	Digest        string          `json:"digest"`
	Val           json.RawMessage `json:"val"`
	OriginalIndex int64           `json:"original_index"`
}

// TableQueryRes answers /table/query.
type TableQueryRes struct {
	Rows []TableRowSchema `json:"rows"`
}

// NewTableQueryRes renders table rows; no rows is an empty list.
func NewTableQueryRes(res storage.TableQueryRes) TableQueryRes {
	out := TableQueryRes{Rows: make([]TableRowSchema, len(res.Rows))}
	for i, r := range res.Rows {
		out.Rows[i] = TableRowSchema(r)
	}
	return out
}

// TableQueryStatsRes answers /table/query_stats.
type TableQueryStatsRes struct {
	Count int64 `json:"count"`
}

// TableStatsRow is one table of /table/query_stats_batch.
type TableStatsRow struct {
	Digest           string `json:"digest"`
	Count            int64  `json:"count"`
	StorageSizeBytes *int64 `json:"storage_size_bytes,omitempty"`
}

// TableQueryStatsBatchRes answers /table/query_stats_batch.
type TableQueryStatsBatchRes struct {
	Tables []TableStatsRow `json:"tables"`
}

// NewTableQueryStatsBatchRes renders table stats; none is an empty list.
func NewTableQueryStatsBatchRes(res storage.TableQueryStatsBatchRes) TableQueryStatsBatchRes {
	out := TableQueryStatsBatchRes{Tables: make([]TableStatsRow, len(res.Tables))}
	for i, t := range res.Tables {
		out.Tables[i] = TableStatsRow(t)
	}
	return out
}
