package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/kafkatest"
)

// TestAgentForwardsExactlyOnceThroughOutageAndKill runs a central weft and
// an agent in front of it, both real binaries, under Weave and OTLP load.
// The center is stopped for a while; meanwhile the agent is SIGKILLed and
// restarted on its buffer; then the center comes back. Every call part,
// rename and span the agent acknowledged must reach the center exactly
// once, and a call's parts and renames in the order they were sent.
func TestAgentForwardsExactlyOnceThroughOutageAndKill(t *testing.T) {
	centerAddr, centerDir, agentDir := kafkatest.DeadAddr(t), t.TempDir(), t.TempDir()
	center := startWeft(t, centerDir, "--listen", centerAddr)
	upstream := "http://" + centerAddr
	agent := startAgent(t, agentDir, upstream, "--agent-api-key", center.AdminKey)
	var url atomic.Value
	url.Store(agent.URL)

	l := newAckLedger()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() { weaveLoad(&url, center.AdminKey, "sidecar/weave", w, stop, l) })
	}
	wg.Go(func() { spanLoad(&url, "otlp", 0, stop, l) })

	phase := func(what string, d time.Duration) int {
		before := l.size()
		time.Sleep(d)
		n := l.size() - before
		t.Logf("%s: %d calls and spans acknowledged", what, n)
		return n
	}
	phase("center up", 1500*time.Millisecond)
	if err := center.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-center.done
	if phase("center stopped", 1500*time.Millisecond) == 0 {
		t.Fatal("the agent acknowledged nothing while the center was away; the test proves nothing")
	}
	if err := agent.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-agent.done
	agent = startAgent(t, agentDir, upstream, "--agent-api-key", center.AdminKey)
	url.Store(agent.URL)
	phase("agent restarted, center still stopped", time.Second)
	center = startWeft(t, centerDir, "--listen", centerAddr)
	phase("center back", time.Second)
	close(stop)
	wg.Wait()

	checkAgentDir(t, agentDir)
	q := newClient(t, center.URL, center.AdminKey)
	waitForwarded(t, q, l)
	checkExactlyOnceInOrder(t, q, l)
}

// waitForwarded waits until the center serves every acknowledged call end
// and span.
func waitForwarded(t *testing.T, q *client, l *ackLedger) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		missing := 0
		ended := map[string]bool{}
		for _, r := range readRows(t, q, "sidecar/weave") {
			ended[r.ID] = r.EndedAt != nil
		}
		spans := map[string]bool{}
		for _, r := range readRows(t, q, "sidecar/otlp") {
			spans[r.ID] = true
		}
		for id := range l.ended {
			if !ended[id] {
				missing++
			}
		}
		for id := range l.spans {
			if !spans[id] {
				missing++
			}
		}
		if missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d acknowledged calls or spans still missing at the center after 90s", missing)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// checkExactlyOnceInOrder compares the center's rows with the ledger.
func checkExactlyOnceInOrder(t *testing.T, q *client, l *ackLedger) {
	t.Helper()
	rows := map[string][]storedRow{}
	for _, r := range readRows(t, q, "sidecar/weave") {
		rows[r.ID] = append(rows[r.ID], r)
	}
	for id := range l.started {
		if n := len(rows[id]); n != 1 {
			t.Errorf("call %s: %d rows at the center, want exactly 1", id, n)
		}
	}
	for id, name := range l.renamed {
		got := rows[id]
		if len(got) != 1 {
			continue // reported above
		}
		if final := derefOr(got[0].DisplayName, "(none)"); !renameAtOrAfter(final, name) {
			t.Errorf("call %s: display name %q, want the last acknowledged rename %q or one sent after it", id, final, name)
		}
	}
	spans := map[string]int{}
	for _, r := range readRows(t, q, "sidecar/otlp") {
		spans[r.ID]++
	}
	for id := range l.spans {
		if spans[id] != 1 {
			t.Errorf("span %s: %d calls at the center, want exactly 1", id, spans[id])
		}
	}
	t.Logf("%d calls (%d renamed) and %d spans acknowledged, each at the center once", len(l.started), len(l.renamed), len(l.spans))
}

// renameAtOrAfter reports whether final is the acknowledged rename or the
// one sent after it: a rename the agent made durable but was killed
// before answering may arrive too, but never one older than an
// acknowledged rename.
func renameAtOrAfter(final, acked string) bool {
	if final == acked {
		return true
	}
	return strings.HasPrefix(acked, "first-") && final == "second-"+strings.TrimPrefix(acked, "first-")
}

func derefOr(s *string, or string) string {
	if s == nil {
		return or
	}
	return *s
}

// checkAgentDir checks that the agent wrote its buffer and its crash log
// (kept for any process, see cmd/weft/crashreport.go) and nothing else:
// no database, no key file.
func checkAgentDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "buffer" && e.Name() != "crash.log" {
			t.Errorf("the agent wrote %s in its data dir; it should hold only its buffer", filepath.Join(dir, e.Name()))
		}
	}
}
