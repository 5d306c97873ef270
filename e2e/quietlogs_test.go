package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestScaleOutLogsNoWarningsInNormalOperation runs the three scale-out
// roles on the dev stack idle, under a load of Weave calls and OTLP spans,
// and idle again, and fails on any WARN or ERROR line: a warning an
// operator learns to ignore hides the one that matters.
func TestScaleOutLogsNoWarningsInNormalOperation(t *testing.T) {
	kafka, ch := devstack(t)
	dsn := ch + "/weft"
	key := createKey(t, dsn)
	roles := map[string]*process{}
	for _, role := range []string{"ingest", "process", "query"} {
		roles[role] = startRole(t, role, kafka, dsn)
	}
	idle := func() { time.Sleep(6 * time.Second) }

	idle()
	in := newClient(t, roles["ingest"].URL, key)
	var want []string
	for b := range 20 {
		ids, body := upsertBody("acme/quiet", fmt.Sprintf("q%d", b), 50)
		in.mustPost("/call/upsert_batch", body, nil)
		want = append(want, ids...)
	}
	sendSpansTo(t, roles["ingest"].URL, key, "acme/quiet", 200)
	q := newClient(t, roles["query"].URL, key)
	deadline := time.Now().Add(60 * time.Second)
	for len(readAllCalls(t, q, "acme/quiet")) < len(want)+200 {
		if time.Now().After(deadline) {
			t.Fatalf("the load was not served within 60s")
		}
		time.Sleep(250 * time.Millisecond)
	}
	idle()

	for role, p := range roles {
		checkNoWarnings(t, role, p)
	}
}

// checkNoWarnings fails the test for each WARN or ERROR line p logged.
func checkNoWarnings(t *testing.T, what string, p *process) {
	t.Helper()
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			t.Errorf("%s logged in normal operation: %s", what, line)
		}
	}
}
