package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestKillDuringLoadLosesNothingAcknowledged writes calls from several
// clients, SIGKILLs the server mid-load, restarts it on the same data dir
// and checks that every call whose batch was acknowledged is there, whole.
func TestKillDuringLoadLosesNothingAcknowledged(t *testing.T) {
	dataDir := t.TempDir()
	p := startWeft(t, dataDir)
	acked := make(chan string, 1<<20)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loadUntilStopped(p.URL, p.AdminKey, w, stop, acked)
		}()
	}
	// Kill once a good amount of load was acknowledged, not after a fixed
	// time: on a busy machine two seconds may acknowledge almost nothing.
	for deadline := time.Now().Add(time.Minute); len(acked) < 2000 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if len(acked) == 0 {
		t.Fatal("nothing was acknowledged in a minute; the kill would prove nothing")
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	close(stop)
	wg.Wait()
	close(acked)
	want := map[string]bool{}
	for id := range acked {
		want[id] = true
	}
	if len(want) == 0 {
		t.Fatal("no batch was acknowledged before the kill; the test proves nothing")
	}
	p2 := startWeft(t, dataDir)
	got := readAllCalls(t, newClient(t, p2.URL, p2.AdminKey), "crash/test")
	missing := 0
	for id := range want {
		c, ok := got[id]
		if !ok || c.EndedAt == nil {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged calls missing or without their end after restart", missing, len(want))
	}
	t.Logf("%d acknowledged calls all present after SIGKILL (%d stored in total)", len(want), len(got))
}

// loadUntilStopped posts upsert batches of 50 complete calls and reports
// the ids of acknowledged batches. Errors (the kill) end the loop.
func loadUntilStopped(base, key string, worker int, stop <-chan struct{}, acked chan<- string) {
	c := &client{base: base, key: key, http: &http.Client{Timeout: 10 * time.Second}}
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		ids, body := upsertBody("crash/test", fmt.Sprintf("w%d-b%d", worker, n), 50)
		status, err := c.tryPost("/call/upsert_batch", body)
		if err != nil {
			return
		}
		if status == http.StatusOK {
			for _, id := range ids {
				acked <- id
			}
		}
	}
}

func upsertBody(project, prefix string, n int) ([]string, []byte) {
	now := time.Now().UTC()
	var batch []map[string]any
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s-%d", prefix, i)
		ids = append(ids, id)
		batch = append(batch,
			map[string]any{"mode": "start", "req": map[string]any{"start": map[string]any{
				"project_id": project, "id": id, "trace_id": prefix, "op_name": "weave:///" + project + "/op/load:v1",
				"started_at": now.Format(time.RFC3339Nano), "attributes": map[string]any{}, "inputs": map[string]any{"i": i, "text": "hello world"}}}},
			map[string]any{"mode": "end", "req": map[string]any{"end": map[string]any{
				"project_id": project, "id": id, "ended_at": now.Add(time.Millisecond).Format(time.RFC3339Nano),
				"output": map[string]any{"ok": true}, "summary": map[string]any{}}}})
	}
	body, _ := json.Marshal(map[string]any{"batch": batch})
	return ids, body
}

type callRow struct {
	ID      string  `json:"id"`
	EndedAt *string `json:"ended_at"`
}

func readAllCalls(t *testing.T, c *client, project string) map[string]callRow {
	t.Helper()
	out := map[string]callRow{}
	for _, r := range readRows(t, c, project) {
		out[r.ID] = callRow{ID: r.ID, EndedAt: r.EndedAt}
	}
	return out
}
