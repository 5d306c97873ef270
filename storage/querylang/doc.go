// Package querylang parses the Weave query language (the "query" field of
// calls, feedback and cost queries: {"$expr": <Operation>}) into a small,
// typed IR, and offers the helpers every query surface shares: walking the
// tree, listing the fields it reads, splitting $getField paths and inferring
// the cast a literal imposes on a dynamic field.
//
// It owns the syntax only: which fields exist and how they become SQL is
// decided by the packages that compile the IR (storage/sqlgen). It must never
// import package storage (which carries parsed queries; errors wrap
// storage/errkind instead), a database driver, a storage backend or the SQL
// generator.
package querylang
