package duckdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// snapshotKeys fills a small filter (so that it grows stages) and a
// locator of sealed runs, an open run and rows without a start.
func snapshotKeys() (*idFilter, *callLocator) {
	f := newIDFilterSized(64, 1e-4)
	l := newCallLocator(8, 3)
	for i := range 300 {
		id, trace := fmt.Sprintf("c%d", i), fmt.Sprintf("t%d", i/3)
		f.add("e/p", id)
		switch {
		case i%50 == 7:
			l.recordStartless("e/p", id)
		case i%97 == 5:
			l.record("e/p", id, trace, time.Time{}) // a start without a time
		default:
			l.record("e/p", id, trace, locT0.Add(time.Duration(i)*time.Second+time.Duration(i)))
		}
	}
	return f, l
}

func encodeKeys(t testing.TB, epoch string, f *idFilter, l *callLocator) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), KeysFileName)
	if err := writeKeySnapshot(path, epoch, f, l); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKeySnapshotRoundTrip(t *testing.T) {
	f, l := snapshotKeys()
	if len(f.stages) < 2 || len(l.runs) < 2 || l.open.parts == 0 || len(l.startless.keys) == 0 {
		t.Fatalf("fixture too small: %d stages, %d runs, %d open parts", len(f.stages), len(l.runs), l.open.parts)
	}
	b := encodeKeys(t, "e1", f, l)
	gotF, gotL, err := decodeKeySnapshot(bytes.NewReader(b), int64(len(b)), "e1", newCallLocator(8, 3))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotF, f) {
		t.Error("the id filter differs after a round trip")
	}
	if !reflect.DeepEqual(gotL, l) {
		t.Errorf("the locator differs after a round trip:\n got %+v\nwant %+v", gotL.open, l.open)
	}
	// And both go on working: new keys land where the originals put them.
	for _, x := range []*struct {
		f *idFilter
		l *callLocator
	}{{f, l}, {gotF, gotL}} {
		x.f.add("e/p", "new")
		x.l.record("e/p", "new", "tn", locT0.Add(time.Hour))
	}
	if !reflect.DeepEqual(gotF, f) || !reflect.DeepEqual(gotL, l) {
		t.Error("keys added after loading land elsewhere than in the original")
	}
	for i := range 300 {
		id := fmt.Sprintf("c%d", i)
		if !gotF.mayContain("e/p", id) {
			t.Fatalf("%s lost", id)
		}
		want, wantOK := l.startedWithin("e/p", []string{id}, false)
		got, ok := gotL.startedWithin("e/p", []string{id}, false)
		if ok != wantOK || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: located within %v (%v), want %v (%v)", id, got, ok, want, wantOK)
		}
	}
}

func TestKeySnapshotRefusals(t *testing.T) {
	f, l := snapshotKeys()
	good := encodeKeys(t, "e1", f, l)
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 1
	cases := []struct {
		name             string
		b                []byte
		epoch            string
		runParts, slices int
		want             string
	}{
		{"another epoch", good, "e2", 8, 3, "epoch"},
		{"another locator layout", good, "e1", 16, 3, "locator runs"},
		{"a flipped bit", flipped, "e1", 8, 3, ""},
		{"empty", nil, "e1", 8, 3, "truncated"},
		{"not a snapshot", []byte("weft call keys?\x00\x00\x00\x00\x00\x00\x00\x00"), "e1", 8, 3, "not a call keys snapshot"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decodeKeySnapshot(bytes.NewReader(tc.b), int64(len(tc.b)), tc.epoch, newCallLocator(tc.runParts, tc.slices))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one naming %q", err, tc.want)
			}
		})
	}
	layout := newCallLocator(8, 3)
	for n := 0; n < len(good); n += 1 + n/3 {
		if _, _, err := decodeKeySnapshot(bytes.NewReader(good[:n]), int64(n), "e1", layout); err == nil {
			t.Fatalf("a snapshot cut to %d of %d bytes loaded", n, len(good))
		}
	}
}

// FuzzDecodeKeySnapshot: no input panics the decoder or makes it
// allocate beyond what the input could describe. The seeds are small
// (a sealed run, an open one, a row without a start): the fuzzer
// minimises every input that finds new code, which took minutes for a
// seed of 23 KB.
func FuzzDecodeKeySnapshot(f *testing.F) {
	small := newCallLocator(2, 1)
	for i, at := range []time.Time{locT0, {}, locT0.Add(time.Hour)} {
		small.record("e/p", fmt.Sprint(i), "t", at)
	}
	small.recordStartless("e/p", "s")
	f.Add(encodeKeys(f, "e1", newIDFilterSized(1, 1e-2), small))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = decodeKeySnapshot(bytes.NewReader(b), int64(len(b)), "e1", newCallLocator(8, 3))
	})
}

// openLoggedStore opens the store in dir with its log kept in logs.
func openLoggedStore(t *testing.T, dir string, logs *bytes.Buffer) *Store {
	t.Helper()
	s, err := Open(context.Background(), dir, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startCalls writes the start parts of calls first..first+n-1.
func startCalls(t *testing.T, s *Store, first, n int) {
	t.Helper()
	var ops []storage.CallOp
	for i := first; i < first+n; i++ {
		id := fmt.Sprintf("k%04d", i)
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
			ProjectID: "e/p", ID: id, TraceID: "t" + id, OpName: "op", StartedAt: locT0.Add(time.Duration(i) * time.Second)}}})
	}
	if _, err := s.WriteCallOps(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
}

// endCalls writes the end parts of calls 0..n-1 and checks that each
// merged into its one row and reads back by id.
func endCalls(t *testing.T, s *Store, n int) {
	t.Helper()
	ctx := context.Background()
	var ops []storage.CallOp
	for i := range n {
		end := locT0.Add(time.Duration(i)*time.Second + time.Millisecond)
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{
			ProjectID: "e/p", ID: fmt.Sprintf("k%04d", i), EndedAt: &end, Summary: json.RawMessage(`{}`)}}})
	}
	if _, err := s.WriteCallOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	var rows, ended int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*), count(ended_at) FROM calls").Scan(&rows, &ended); err != nil {
		t.Fatal(err)
	}
	if rows != n || ended != n {
		t.Fatalf("%d rows, %d ended, want %d of each: an end part did not find its call", rows, ended, n)
	}
	for c, err := range s.QueryCalls(ctx, storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{CallIDs: []string{"k0000", fmt.Sprintf("k%04d", n-1)}}}) {
		if err != nil || c.EndedAt == nil {
			t.Fatalf("read by id: %+v, %v", c, err)
		}
	}
}

// TestCallKeysSurviveACleanRestart: the keys saved at Close are loaded at
// the next open, and later parts find the calls stored before.
func TestCallKeysSurviveACleanRestart(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	s := openLoggedStore(t, dir, &logs)
	startCalls(t, s, 0, 500)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, KeysFileName)); err != nil {
		t.Fatalf("no snapshot after a clean close: %v", err)
	}
	logs.Reset()
	s = openLoggedStore(t, dir, &logs)
	defer s.Close()
	if !strings.Contains(logs.String(), "from=\"the snapshot") {
		t.Fatalf("keys not loaded from the snapshot:\n%s", logs.String())
	}
	if _, err := os.Stat(filepath.Join(dir, KeysFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the snapshot is left in place after it was loaded: %v", err)
	}
	endCalls(t, s, 500)
}

// TestCallKeysFromAnotherEpochAreRebuilt: a snapshot older than the
// calls file (as a crash after writes leaves, or a copied file) is not
// loaded; the keys of every call are.
func TestCallKeysFromAnotherEpochAreRebuilt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, KeysFileName)
	var logs bytes.Buffer
	s := openLoggedStore(t, dir, &logs)
	startCalls(t, s, 0, 200)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	stale, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s = openLoggedStore(t, dir, &logs)
	startCalls(t, s, 200, 300) // unknown to the stale snapshot
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, stale, 0o600); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	s = openLoggedStore(t, dir, &logs)
	defer s.Close()
	if !strings.Contains(logs.String(), "epoch") || !strings.Contains(logs.String(), "from=\"the calls table\"") {
		t.Fatalf("a stale snapshot was not refused:\n%s", logs.String())
	}
	endCalls(t, s, 500)
}

// TestIndexBytesReported: the store tells Options.IndexBytes what its call
// keys hold once it opens, whether it loaded or rebuilt them, and the
// figure is what the filter and the locator hold.
func TestIndexBytesReported(t *testing.T) {
	dir := t.TempDir()
	for _, run := range []string{"rebuilt", "loaded"} {
		var reported []int64
		s, err := OpenWithOptions(context.Background(), dir, Options{IndexBytes: func(n int64) { reported = append(reported, n) }},
			slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		startCalls(t, s, 0, 100)
		want := s.ids.bytes() + s.located.bytes()
		if len(reported) == 0 || reported[0] < 1<<20 || reported[len(reported)-1] > want || want-reported[0] > indexReportStep {
			t.Fatalf("%s: reported %v, the keys hold %d", run, reported, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
