// Package storekit holds the backend-neutral rules every storage backend
// shares: resolving refs, preparing and updating tables, paging and sorting
// table rows, the create and delete rules of object versions, and the
// checks and query shapes of feedback, prices and files. Backends keep only
// what differs per engine (SQL text, transactions, versioned rows) and
// reach their data through the small interfaces and function parameters
// declared here, so a rule changes in one place for all of them.
//
// It must never import a backend, a database driver or HTTP code.
package storekit
