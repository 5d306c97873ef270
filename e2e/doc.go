// Package e2e holds black-box tests that build the weft binary and drive
// it as a user would: over HTTP, with real keys, killing and restarting
// the process.
package e2e
