// Package httpapi holds what every Weft HTTP endpoint shares: reading a
// bounded body (gzip-aware), authenticating the caller, authorising a
// project, and answering errors in the Weave shape ({"reason": ...}) with
// the status code the error kind calls for.
//
// It must never import receivers, the query API or storage backends.
package httpapi
