package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/weftdev/weft/config"
)

// settingsFlags returns the flag set of one subcommand with the settings'
// flags of scope registered on it (--config, --data-dir, --clickhouse-dsn,
// --kafka-brokers, ...), so serve, migrate and keys share flag names,
// WEFT_* variables and weft.yaml. The caller adds its own flags, parses,
// then calls Config on the returned Flags.
func settingsFlags(name string, scope config.Scope, stderr io.Writer, getenv func(string) string) (*flag.FlagSet, *config.Flags) {
	fs := flag.NewFlagSet("weft "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs, config.RegisterFlags(fs, scope, getenv)
}

// loadSettings reads the configuration of a subcommand that takes only the
// settings' flags and no arguments.
func loadSettings(name string, scope config.Scope, args []string, stderr io.Writer, getenv func(string) string) (config.Config, error) {
	fs, settings := settingsFlags(name, scope, stderr, getenv)
	if err := fs.Parse(args); err != nil {
		return config.Config{}, err
	}
	if fs.NArg() > 0 {
		return config.Config{}, fmt.Errorf("%s: unexpected argument %q", name, fs.Arg(0))
	}
	return settings.Config()
}
