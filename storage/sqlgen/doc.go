// Package sqlgen is the one compiler of the query IR (storage/querylang)
// into SQL with bound parameters. It renders calls and threads queries
// (storage.CallsQuery with its CallsFilter, parsed query expression and
// sort terms) and the column-by-column queries of the small tables,
// feedback and prices (TableSelect, TableCount). Everything
// engine-specific sits behind Dialect, which DuckDB (embedded) and
// ClickHouse (scale-out) implement here.
//
// Every user value (ids, literals, JSON paths, prefixes, limits) becomes a
// bound parameter; the SQL text holds only identifiers, operators and
// constants of the product. Every scan of a table starts its WHERE clause
// with the project predicate.
//
// The package builds statements only. It must never import a database
// driver, a storage backend or the HTTP layer.
package sqlgen
