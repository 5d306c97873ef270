package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestBackupWhileServingRestoresEveryCall backs up a running weft with
// `weft backup` while calls keep arriving, restores the file with `weft
// restore` into a new directory and starts a second weft on it: every call
// acknowledged before the backup began is there, whole, nothing that was
// never written is, the admin key still works, and the first server went
// on taking writes throughout.
func TestBackupWhileServingRestoresEveryCall(t *testing.T) {
	const project = "acme/backup"
	p := startWeft(t, t.TempDir())
	c := newClient(t, p.URL, p.AdminKey)

	var mu sync.Mutex
	acked := map[string]bool{}
	write := func(prefix string) error {
		ids, body := upsertBody(project, prefix, 25)
		status, err := c.tryPost("/call/upsert_batch", body)
		if err != nil || status != http.StatusOK {
			return fmt.Errorf("upsert %s: %d %v", prefix, status, err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			acked[id] = true
		}
		return nil
	}
	for b := range 8 {
		if err := write(fmt.Sprintf("before%d", b)); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	before := len(acked)
	beforeIDs := make([]string, 0, before)
	for id := range acked {
		beforeIDs = append(beforeIDs, id)
	}
	mu.Unlock()

	stop := make(chan struct{})
	var during []error
	var wg sync.WaitGroup
	wg.Go(func() {
		for b := 0; ; b++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := write(fmt.Sprintf("during%d", b)); err != nil {
				during = append(during, err)
				return
			}
		}
	})
	file := filepath.Join(t.TempDir(), "weft-backup.tar")
	cmd := exec.Command(binary(t), "backup", "--url", p.URL, "--out", file)
	cmd.Env = append(os.Environ(), "WEFT_API_KEY="+p.AdminKey)
	out, err := cmd.CombinedOutput()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("weft backup: %v\n%s", err, out)
	}
	if len(during) > 0 {
		t.Fatalf("a write failed while the backup ran: %v", during[0])
	}
	if strings.TrimSpace(string(out)) != file {
		t.Fatalf("weft backup printed %q, want the file", out)
	}
	if len(acked) == before {
		t.Log("no write was acknowledged while the backup ran")
	}

	restored := filepath.Join(t.TempDir(), "restored")
	if out, err := exec.Command(binary(t), "restore", "--from", file, "--data-dir", restored).CombinedOutput(); err != nil {
		t.Fatalf("weft restore: %v\n%s", err, out)
	}
	if out, err := exec.Command(binary(t), "restore", "--from", file, "--data-dir", restored).CombinedOutput(); err == nil || !strings.Contains(string(out), "not empty") {
		t.Fatalf("restore into a used directory: %v %s, want a refusal", err, out)
	}
	p2 := startWeft(t, restored)
	if p2.AdminKey != p.AdminKey {
		t.Fatal("the restored server has another admin key")
	}
	got := readAllCalls(t, newClient(t, p2.URL, p.AdminKey), project)
	for _, id := range beforeIDs {
		row, ok := got[id]
		if !ok {
			t.Fatalf("call %s, acknowledged before the backup, is not in the restore (%d of %d calls there)", id, len(got), len(acked))
		}
		if row.EndedAt == nil {
			t.Fatalf("call %s restored without its end", id)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for id := range got {
		if !acked[id] {
			t.Fatalf("restored call %s was never written", id)
		}
	}
	t.Logf("%d calls before the backup, %d acknowledged in all, %d restored", before, len(acked), len(got))
	// The first server still serves everything it acknowledged.
	if n := len(readAllCalls(t, c, project)); n != len(acked) {
		t.Fatalf("the running server has %d calls after the backup, want %d", n, len(acked))
	}
	checkNoWarnings(t, "the server backed up", p)
	checkNoWarnings(t, "the restored server", p2)
}

// TestBackupNeedsTheInstanceAdmin checks that a key scoped to an entity
// cannot take a backup, which holds every project and the keys.
func TestBackupNeedsTheInstanceAdmin(t *testing.T) {
	dir := t.TempDir()
	p := startWeft(t, dir)
	out, err := exec.Command(binary(t), "keys", "create", "--data-dir", dir, "--entity", "acme", "--role", "admin").Output()
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	entityAdmin := lines[len(lines)-1]
	file := filepath.Join(t.TempDir(), "b.tar")
	cmd := exec.Command(binary(t), "backup", "--url", p.URL, "--out", file)
	cmd.Env = append(os.Environ(), "WEFT_API_KEY="+entityAdmin)
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "403") {
		t.Fatalf("backup with an entity admin key: %v %s, want 403", err, msg)
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatal("a refused backup left a file")
	}
}
