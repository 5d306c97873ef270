package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

func TestFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"help", []string{"-h"}, 0, "-dir"},
		{"missing dir", nil, 2, "--dir is required"},
		{"bad partitions", []string{"--dir", "x", "--topics", "a:0"}, 2, "bad partition count"},
		{"no brokers", []string{"--dir", "x", "--kafka-brokers", "0"}, 2, "at least 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tc.args, &stdout, &stderr); code != tc.code {
				t.Fatalf("exit code %d, want %d; stderr %s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.msg) || stdout.Len() != 0 {
				t.Fatalf("stderr %q lacks %q (stdout %q)", stderr.String(), tc.msg, stdout.String())
			}
		})
	}
}

func TestParseTopics(t *testing.T) {
	got, err := parseTopics(" events:8, spans ,,")
	want := []topic{{"events", 8}, {"spans", -1}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
}

// TestBinary builds weft-devstack, runs it, uses both services, then stops it
// with SIGTERM and expects exit status 0.
func TestBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "weft-devstack")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--dir", t.TempDir(), "--topics", "events:2")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	env, err := readEnv(stdout, 60*time.Second)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	checkClickHouse(t, env["CLICKHOUSE"])
	checkKafka(t, strings.Split(env["KAFKA"], ","))

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopped") {
		t.Fatalf("no clean shutdown logged; stderr:\n%s", stderr.String())
	}
}

// readEnv reads KEY=VALUE lines until both expected keys arrived.
func readEnv(r io.Reader, timeout time.Duration) (map[string]string, error) {
	type result struct {
		env map[string]string
		err error
	}
	done := make(chan result, 1)
	go func() {
		env := map[string]string{}
		sc := bufio.NewScanner(r)
		for (env["KAFKA"] == "" || env["CLICKHOUSE"] == "") && sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				env[k] = v
			}
		}
		if env["KAFKA"] == "" || env["CLICKHOUSE"] == "" {
			done <- result{err: errors.New("stdout ended before KAFKA= and CLICKHOUSE= lines")}
			return
		}
		done <- result{env: env}
		io.Copy(io.Discard, r)
	}()
	select {
	case res := <-done:
		return res.env, res.err
	case <-time.After(timeout):
		return nil, errors.New("timed out waiting for KAFKA= and CLICKHOUSE= lines")
	}
}

func checkClickHouse(t *testing.T, base string) {
	t.Helper()
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("CLICKHOUSE=%q is not a loopback URL", base)
	}
	res, err := http.Get(base + "/?query=" + url.QueryEscape("SELECT 40 + 2"))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || string(body) != "42\n" {
		t.Fatalf("ClickHouse answered %d %q, want 200 \"42\\n\"", res.StatusCode, body)
	}
}

func checkKafka(t *testing.T, addrs []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := &kafka.Writer{Addr: kafka.TCP(addrs...), Topic: "events", RequiredAcks: kafka.RequireAll,
		BatchTimeout: 5 * time.Millisecond}
	defer w.Close()
	if err := w.WriteMessages(ctx, kafka.Message{Key: []byte("k"), Value: []byte("hello")}); err != nil {
		t.Fatalf("produce to %v: %v", addrs, err)
	}
	md, err := (&kafka.Client{Addr: kafka.TCP(addrs...)}).Metadata(ctx, &kafka.MetadataRequest{Topics: []string{"events"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 2 {
		t.Fatalf("topic events: got %+v, want 2 partitions", md.Topics)
	}
}
