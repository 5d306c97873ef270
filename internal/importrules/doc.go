// Package importrules enforces, as a test that `go test ./...` runs, the
// import rules the package doc comments state: storage knows no receiver,
// processor, exporter, query API or HTTP shape; receivers and the query
// API never import a backend, since only app and cmd know concrete
// backends; and so on (see rules.go). A rule is checked on everything a
// package depends on, directly or not, in non-test code; a rule naming a
// package that does not exist yet simply matches nothing.
//
// It must never be imported: it holds rules and their check only.
package importrules
