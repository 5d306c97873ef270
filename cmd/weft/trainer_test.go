package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestTrainerFlags: the key from the environment never shows in help,
// and what is missing or stray is named.
func TestTrainerFlags(t *testing.T) {
	env := map[string]string{"WEFT_API_KEY": "weft-secret-worker-key", "WEFT_URL": "http://127.0.0.1:1"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"trainer", "-h"}, ""},
		{[]string{"trainer", "--url", "http://x"}, "--command"},
		{[]string{"trainer", "--command", "true", "extra"}, `unexpected argument "extra"`},
		{[]string{"trainer", "--command", "true", "--log-level", "loud"}, "--log-level"},
		{[]string{"trainer", "--command", "true", "--ca-cert", "/nonexistent.pem"}, "--ca-cert"},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, &stdout, &stderr, func(k string) string { return env[k] })
		if strings.Contains(stderr.String()+stdout.String(), "weft-secret-worker-key") {
			t.Fatalf("%v printed the key:\n%s", tc.args, stderr.String())
		}
		switch {
		case tc.want == "" && !errors.Is(err, flag.ErrHelp):
			t.Errorf("%v: %v, want help", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
}
