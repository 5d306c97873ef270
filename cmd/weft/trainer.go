package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/weftdev/weft/training/trainer"
)

const trainerUsage = `usage: weft trainer --url URL --key KEY --command CMD [flags]

Leases training jobs from weft and runs CMD (with sh -c) for each: the job
arrives on the command's standard input and in $WEFT_TASK_FILE, its
checkpoint goes under $WEFT_OUTPUT_DIR, and the JSON lines it prints become
the job's events and checkpoint (see docs/training.md, "Training workers").
KEY is a worker key: weft keys create --entity ENTITY --role worker.

`

// trainerCmd runs weft trainer until interrupted.
func trainerCmd(ctx context.Context, args []string, _, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("trainer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, trainerUsage); fs.PrintDefaults() }
	url := fs.String("url", getenv("WEFT_URL"), "weft's address, e.g. http://127.0.0.1:6345 (env WEFT_URL)")
	// The key's default is read after parsing, so -h never prints it.
	key := fs.String("key", "", "a worker key (env WEFT_API_KEY)")
	command := fs.String("command", "", "the command run for each job, with sh -c")
	worker := fs.String("worker", "", "this worker's name in the jobs' state (default the host name)")
	workDir := fs.String("work-dir", os.TempDir(), "where each job's files are kept while it runs")
	wait := fs.Duration("wait", 30*time.Second, "how long one lease request waits for a job")
	grace := fs.Duration("kill-grace", 10*time.Second, "time between SIGTERM and SIGKILL when a job's command is stopped")
	caCert := fs.String("ca-cert", "", "PEM certificate to trust for an https URL (e.g. weft-data/tls/cert.pem)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("trainer: unexpected argument %q (quote the command: --command \"...\")", fs.Arg(0))
	}
	if *key == "" {
		*key = getenv("WEFT_API_KEY")
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("trainer: --log-level: %w", err)
	}
	hc, err := trainerHTTP(*caCert, *wait)
	if err != nil {
		return err
	}
	t, err := trainer.New(trainer.Options{URL: *url, Key: *key, Command: *command, Worker: *worker, WorkDir: *workDir,
		Wait: *wait, KillGrace: *grace, HTTP: hc, Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))})
	if err != nil {
		return err
	}
	return t.Run(ctx)
}

// trainerHTTP is the trainer's client, trusting caCert when given.
func trainerHTTP(caCert string, wait time.Duration) (*http.Client, error) {
	hc := &http.Client{Timeout: wait + 5*time.Minute}
	if caCert == "" {
		return hc, nil
	}
	pem, err := os.ReadFile(caCert)
	if err != nil {
		return nil, fmt.Errorf("trainer: --ca-cert: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("trainer: --ca-cert: no PEM certificate in the file")
	}
	hc.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return hc, nil
}
