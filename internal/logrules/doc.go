// Package logrules enforces, as a test that `go test ./...` runs, the
// shape of Weft's warnings and errors (docs/operations.md, Logs): every
// slog call at WARN or ERROR in non-test code has a constant message of
// at least MinWords words, made of what happened, then "; ", then what
// happens next or what the operator should do or check.
//
// The calls are found by syntax, not by type: a Warn, Error, WarnContext
// or ErrorContext method on a receiver whose name ends in "log" or
// "logger", and any Log call given slog.LevelWarn or slog.LevelError
// (slog.Logger.Log and kafkabase.LimitedLogger.Log both take the message
// as their third argument). Whether a message is actionable is left to
// review; the check keeps each one from shrinking back to the name of
// the step that failed.
//
// It must never be imported: it holds the rule and its check only.
package logrules
