package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSoakKillLosesNothing runs a short soak against a real weft: a
// center and an agent under every kind of load, the center (and the
// agent with it) SIGKILLed once. Nothing may crash, no read may come
// back short, and every call, span, object, webhook delivery and
// training step acknowledged must be at the center exactly once.
func TestSoakKillLosesNothing(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "weft")
	if out, err := exec.Command("go", "build", "-o", bin, "../weft").CombinedOutput(); err != nil {
		t.Fatalf("go build ../weft: %v\n%s", err, out)
	}
	o, err := parseSoak([]string{"--weft", bin, "--out", t.TempDir(),
		"--duration", "20s", "--kill-every", "10s", "--kill-agent", "--down-for", "1s",
		"--sample-every", "4s", "--settle", "90s", "--full-read-every", "2s",
		"--span-rate", "100", "--span-batch", "10", "--call-rate", "50", "--call-batch", "5",
		"--read-rate", "8", "--infer-rate", "2", "--hook-rate", "2", "--train-rate", "2", "--train-steps", "20", "--payload", "200"})
	if err != nil {
		t.Fatal(err)
	}
	o.log = testLog{t}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r, err := runSoak(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if bad := r.failures(); len(bad) > 0 {
		t.Errorf("soak: %s", strings.Join(bad, "; "))
	}
	if r.Kills != 1 || r.AgentKills != 1 || r.Starts != 2 {
		t.Errorf("center killed %d times, agent %d, center started %d times; want 1, 1, 2", r.Kills, r.AgentKills, r.Starts)
	}
	// The soak must have had something to lose on every path.
	for what, n := range map[string]int{"calls": r.Calls, "ended calls": r.Ended, "renames": r.Renamed, "spans": r.Spans,
		"objects": r.Objects, "webhook aliases": r.Hooks, "training steps": r.TrainSteps, "samples": r.Samples} {
		if n == 0 {
			t.Errorf("no %s acknowledged: the soak proves nothing of them", what)
		}
	}
	for _, k := range r.Kinds {
		if k.OK == 0 {
			t.Errorf("%s: no request answered", k.Kind)
		}
	}
}

// testLog prints the soak's progress lines in the test log.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestSoakLedgerCatches checks the soak's verdicts themselves: a call
// served once and then missing is a short read, two rows of a call a
// duplicate, an end or a rename older than acknowledged a loss.
func TestSoakLedgerCatches(t *testing.T) {
	l := newProjectLedger("soak/p")
	l.ack([]string{"a", "b", "c"}, false)
	l.end([]string{"a", "b"})
	l.rename("a", "first-a")
	l.rename("b", "second-b")
	l.rename("c", "first-c")
	ended, second, first := "2025-01-01T00:00:00Z", "second-a", "first-b"
	rows, err := readServed(strings.NewReader(`{"id":"a","ended_at":"` + ended + `","display_name":"` + second + `"}` + "\n" +
		`{"id":"b","ended_at":"` + ended + `"}` + "\n" + `{"id":"x"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := l.check(rows, 0); c.missingVisible != 0 || c.duplicated != 0 || l.visibleCount() != 2 {
		t.Fatalf("first read: %+v, %d visible; want nothing missing and a, b visible", c, l.visibleCount())
	}
	if l.pending(rows) != 1 {
		t.Errorf("pending = %d, want 1 (c)", l.pending(rows))
	}
	// b disappears, a is served twice, c appears without its end.
	rows, _ = readServed(strings.NewReader(`{"id":"a"}` + "\n" + `{"id":"a"}` + "\n" + `{"id":"c","display_name":"first-c"}` + "\n"))
	if c := l.check(rows, l.visibleCount()); c.missingVisible != 1 || c.duplicated != 1 {
		t.Errorf("second read: %+v; want b missing and a duplicated", c)
	}
	rows, _ = readServed(strings.NewReader(`{"id":"a","ended_at":"` + ended + `","display_name":"` + second + `"}` + "\n" +
		`{"id":"b","ended_at":"` + ended + `","display_name":"` + first + `"}` + "\n" + `{"id":"c","display_name":"first-c"}` + "\n"))
	if f := l.final(rows); f.lost != 0 || f.duplicated != 0 || f.staleRenames != 1 {
		t.Errorf("final: %+v; want only b's rename stale (a's later rename is allowed)", f)
	}
	rows, _ = readServed(strings.NewReader(`{"id":"a","display_name":"first-a"}` + "\n" + `{"id":"c"}` + "\n" + `{"id":"c"}` + "\n"))
	if f := l.final(rows); f.lost != 2 || f.duplicated != 1 {
		t.Errorf("final: %+v; want a's end and b lost, c duplicated", f)
	}
	if _, err := readServed(strings.NewReader(`{"id":"a"}` + "\n" + `{"id":"b","ended`)); err == nil {
		t.Error("a cut-off line was read as whole")
	}
}

// TestSoakJudgesMemoryUnderLoadOnly: the levelling rule compares the
// thirds of the load; what the center does after it (storing a backlog
// as fast as it can) is not a third of the load.
func TestSoakJudgesMemoryUnderLoadOnly(t *testing.T) {
	at := func(m int) time.Duration { return time.Duration(m) * time.Minute }
	for _, tc := range []struct {
		name    string
		samples []soakSample
		want    bool
	}{
		{"flat", []soakSample{{at: at(1), rssMiB: 100}, {at: at(12), rssMiB: 300}, {at: at(25), rssMiB: 320}}, true},
		{"grows under load", []soakSample{{at: at(1), rssMiB: 100}, {at: at(12), rssMiB: 300}, {at: at(25), rssMiB: 400}}, false},
		{"a burst after the load", []soakSample{{at: at(1), rssMiB: 100}, {at: at(12), rssMiB: 300}, {at: at(25), rssMiB: 320}, {at: at(31), rssMiB: 600}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := soakReport{Duration: at(30)}
			r.judgeSamples(tc.samples)
			if r.Levelled != tc.want {
				t.Fatalf("levelled %v (middle %v, last %v), want %v", r.Levelled, r.RSSMiddleMax, r.RSSLastMax, tc.want)
			}
		})
	}
}
