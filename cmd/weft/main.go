// Command weft is the Weft server and its administration tool:
//
//	weft serve     run the server (embedded DuckDB by default)
//	weft agent     run the agent role: buffer on disk, forward upstream
//	weft keys      create, list and revoke API keys
//	weft migrate   apply storage migrations, create Kafka topics, and exit
//	weft backup    write a running server's embedded store to a tar file
//	weft restore   unpack such a backup into a new data directory
//	weft certs     make a self-signed TLS certificate for local development
//	weft trainer   lease training jobs and run a command for each
//	weft version   print the version, commit and build date
//
// main is the only place that exits the process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: weft <command> [flags]

commands:
  serve     run the server (see 'weft serve -h')
  agent     run a collector sidecar: same as 'weft serve --roles agent --upstream URL'
  keys      manage API keys: create, list, revoke (see 'weft keys -h')
  migrate   apply storage migrations and create the Kafka topics, then exit
  backup    write a consistent snapshot of a running server's embedded
            store to a tar file (see 'weft backup -h')
  restore   unpack a backup into a new data directory (see 'weft restore -h')
  certs     make a self-signed TLS certificate and key for local development
            and print how to serve and trust them (see 'weft certs -h')
  trainer   lease training jobs and run a command for each (see 'weft trainer -h')
  version   print the version, commit and build date

serve, keys and migrate read the same settings the same way: --config FILE
(env WEFT_CONFIG), --data-dir, --clickhouse-dsn, --kafka-brokers,
--log-level and the WEFT_* variables (see 'weft serve -h').
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "weft:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr, getenv)
	case "agent":
		return serve(ctx, append([]string{"--roles", "agent"}, args[1:]...), stdout, stderr, getenv)
	case "keys":
		return keys(ctx, args[1:], stdout, stderr, getenv)
	case "migrate":
		return migrate(ctx, args[1:], stdout, stderr, getenv)
	case "backup":
		return backupCmd(ctx, args[1:], stdout, stderr, getenv)
	case "restore":
		return restoreCmd(ctx, args[1:], stdout, stderr, getenv)
	case "certs":
		return certs(ctx, args[1:], stdout, stderr, getenv)
	case "trainer":
		return trainerCmd(ctx, args[1:], stdout, stderr, getenv)
	case "version":
		fmt.Fprintln(stdout, versionString())
		return nil
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
