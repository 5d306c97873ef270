package inference

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/storage"
)

// registryAliases is an alias store: alias -> version index, versions
// served as echo-v<N>.
type registryAliases struct {
	mu      sync.Mutex
	aliases map[string]int64
	reads   int
}

func (r *registryAliases) ResolveAlias(_ context.Context, projectID, collection, alias string) (AliasTarget, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	v, ok := r.aliases[alias]
	if projectID != "acme/wandb-registry-models" || collection != "classifier" || !ok {
		return AliasTarget{}, fmt.Errorf("%s/%s:%s: %w", projectID, collection, alias, storage.ErrNotFound)
	}
	return AliasTarget{Digest: fmt.Sprintf("digest-%d", v), VersionIndex: v, ServedAs: fmt.Sprintf("echo-v%d", v)}, nil
}

func (r *registryAliases) move(alias string, version int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if version < 0 {
		delete(r.aliases, alias)
		return
	}
	r.aliases[alias] = version
}

func (r *registryAliases) readCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads
}

// newFollowHarness serves model "classifier" following the production
// alias (and a canary at 20%) of acme/wandb-registry-models/classifier.
func newFollowHarness(t *testing.T) (*harness, *registryAliases) {
	t.Helper()
	mc := model("classifier", "", on("up", ""))
	mc.Follow = &catalog.Follow{Collection: "acme/wandb-registry-models/classifier", Alias: "production",
		Canary: &catalog.Canary{Alias: "canary", Weight: 0.2}}
	h := newHarness(t, func(c *Config) { c.Models = append(c.Models, mc) })
	reg := &registryAliases{aliases: map[string]int64{"production": 1}}
	// Refreshes only on alias events: the test shows they move traffic.
	h.gw.follower = newFollower(reg, h.gw.catalog, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.gw.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return h, reg
}

// servedBy asks the classifier once and returns the version that
// answered, as the answer and the traced call tell it.
func servedBy(t *testing.T, h *harness) string {
	t.Helper()
	status, _, body := h.chat(msg("classifier", "which", nil), nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	return fmt.Sprint(field(t, body, "model"))
}

// waitServed waits until the classifier is answered by want.
func waitServed(t *testing.T, h *harness, want string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if v := (*h.gw.follower.table.Load())["classifier"].primary; v != nil && v.ServedAs == want {
			return
		}
	}
	t.Fatalf("the classifier's production version is not %s", want)
}

func TestFollowAliasMoveAndRollback(t *testing.T) {
	h, reg := newFollowHarness(t)
	waitServed(t, h, "echo-v1")
	status, header, body := h.chat(msg("classifier", "which", nil), nil)
	if status != 200 || field(t, body, "model") != "echo-v1" {
		t.Fatalf("status %d: %s", status, body)
	}
	var attrs struct {
		Inference struct {
			UpstreamModel string `json:"upstream_model"`
			Artifact      map[string]string
		}
	}
	if err := json.Unmarshal(h.waitCall(header.Get(callIDHeader)).Attributes, &attrs); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"collection": "acme/wandb-registry-models/classifier", "alias": "production",
		"version": "v1", "digest": "digest-1", "served_as": "echo-v1"}
	if fmt.Sprint(attrs.Inference.Artifact) != fmt.Sprint(want) || attrs.Inference.UpstreamModel != "echo-v1" {
		t.Errorf("attributes.inference.artifact = %v, want %v", attrs.Inference.Artifact, want)
	}

	// Requests read no store: the version is in memory.
	reads := reg.readCount()
	for range 5 {
		servedBy(t, h)
	}
	if reg.readCount() != reads {
		t.Errorf("5 requests read the alias store %d times", reg.readCount()-reads)
	}

	// Moving production moves traffic once the alias event arrives.
	reg.move("production", 2)
	h.gw.AliasMoved("acme/wandb-registry-models", "classifier")
	waitServed(t, h, "echo-v2")
	for i := range 10 {
		if got := servedBy(t, h); got != "echo-v2" {
			t.Fatalf("request %d after the move answered by %s", i, got)
		}
	}
	// An event of another collection changes nothing and costs no read.
	reads = reg.readCount()
	h.gw.AliasMoved("acme/wandb-registry-models", "other")
	time.Sleep(20 * time.Millisecond)
	if reg.readCount() != reads {
		t.Errorf("an event of another collection refreshed the aliases")
	}
	// Rolling back is moving the alias back.
	reg.move("production", 1)
	h.gw.AliasMoved("acme/wandb-registry-models", "classifier")
	waitServed(t, h, "echo-v1")
	if got := servedBy(t, h); got != "echo-v1" {
		t.Fatalf("after the rollback answered by %s", got)
	}
}

func TestFollowCanaryTakesItsShare(t *testing.T) {
	h, reg := newFollowHarness(t)
	reg.move("canary", 3)
	h.gw.AliasMoved("acme/wandb-registry-models", "classifier")
	for deadline := time.Now().Add(2 * time.Second); (*h.gw.follower.table.Load())["classifier"].canary == nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the canary alias was not learnt")
		}
	}
	const n = 400
	counts := map[string]int{}
	for range n {
		counts[servedBy(t, h)]++
	}
	// 0.2 of 400: 5 standard deviations (0.1) either side.
	if share := float64(counts["echo-v3"]) / n; share < 0.1 || share > 0.3 || counts["echo-v1"]+counts["echo-v3"] != n {
		t.Errorf("answered by %v: the canary's share is %.2f, want about 0.2", counts, share)
	}
	// Removing the canary alias sends everything back to production.
	reg.move("canary", -1)
	h.gw.AliasMoved("acme/wandb-registry-models", "classifier")
	for deadline := time.Now().Add(2 * time.Second); (*h.gw.follower.table.Load())["classifier"].canary != nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the canary alias's removal was not learnt")
		}
	}
	for range 20 {
		if got := servedBy(t, h); got != "echo-v1" {
			t.Fatalf("without a canary answered by %s", got)
		}
	}
}

func TestFollowAliasPointingNowhere(t *testing.T) {
	h, reg := newFollowHarness(t)
	reg.move("production", -1)
	h.gw.AliasMoved("acme/wandb-registry-models", "classifier")
	for deadline := time.Now().Add(2 * time.Second); (*h.gw.follower.table.Load())["classifier"].primary != nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the alias's removal was not learnt")
		}
	}
	status, header, body := h.chat(msg("classifier", "which", nil), nil)
	if status != http.StatusServiceUnavailable || header.Get("Retry-After") == "" || !strings.Contains(string(body), "points at no version") {
		t.Fatalf("status %d: %s", status, body)
	}
}
