// Package wire holds the Weave trace-server JSON shapes shared by the
// receivers and the query API: request and response structs, the lenient
// datetime format clients send, strict top-level decoding, and conversion
// between the wire forms and the storage contract's types (calls, threads,
// objects, tables, query filters and sort terms), which carry no JSON tags.
//
// It must never import storage backends, receivers or the query API.
package wire
