// Package chdb runs the embedded ClickHouse engine (libchdb) in process.
//
// It owns loading libchdb.so at run time (dlopen, so building and vetting the
// module never needs the library), a pool of engine connections, and running
// one statement with parameters, settings and a current database. The library
// is found through WEFT_LIBCHDB or the cache folder scripts/install-libchdb.sh
// fills; a missing library is a clean error wrapping ErrLibraryMissing.
//
// The engine is process-wide: one data directory per process at a time, and
// the last connection closed shuts it down. Engine.Close must run before the
// process exits (under -race, exiting with engine threads alive crashes).
//
// This package is test and development infrastructure. It must never import
// other weft packages, and production code must never import it.
package chdb
