package chfront

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

const eventRows = 10_000

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// createEvents creates a MergeTree table and batch-inserts eventRows rows.
// Row i: id=i, name "op-<i%10>", duration i ms, started epoch+i s+i µs,
// note NULL for odd i, tags [t<i%3>, "x\n\ny"], attrs JSON text.
func createEvents(t *testing.T, conn driver.Conn) {
	t.Helper()
	ctx := testContext(t)
	err := conn.Exec(ctx, `CREATE TABLE events (
		id Int64, name String, duration_ms Int64, started DateTime64(6, 'UTC'),
		note Nullable(String), tags Array(String), attrs String
	) ENGINE = MergeTree PARTITION BY toYYYYMM(started) ORDER BY (name, id)`)
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO events")
	if err != nil {
		t.Fatalf("prepare batch: %v", err)
	}
	for i := range eventRows {
		var note *string
		if i%2 == 0 {
			s := fmt.Sprintf("note %d", i)
			note = &s
		}
		// The "\n\n" in tags puts blank lines in the Native body, which the
		// engine would cut inline data at.
		err := batch.Append(int64(i), fmt.Sprintf("op-%d", i%10), int64(i),
			epoch.Add(time.Duration(i)*time.Second+time.Duration(i)*time.Microsecond),
			note, []string{fmt.Sprintf("t%d", i%3), "x\n\ny"},
			fmt.Sprintf(`{"model":"m%d","usage":{"tokens":%d}}`, i%4, i%100))
		if err != nil {
			t.Fatalf("append row %d: %v", i, err)
		}
	}
	if err := batch.Send(); err != nil {
		t.Fatalf("send batch: %v", err)
	}
}

func TestBatchInsertAndTypedScan(t *testing.T) {
	conn := open(t, NewTestDatabase(t, StartForTest(t)))
	createEvents(t, conn)
	ctx := testContext(t)

	var count uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM events").Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != eventRows {
		t.Fatalf("count = %d, want %d", count, eventRows)
	}
	tests := []struct {
		id       int64
		wantNote *string
	}{
		{id: 0, wantNote: ptr("note 0")},
		{id: 4321},
		{id: eventRows - 2, wantNote: ptr(fmt.Sprintf("note %d", eventRows-2))},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.id), func(t *testing.T) { checkEvent(t, conn, tc.id, tc.wantNote) })
	}
}

// checkEvent reads row id back with a server-side parameter and compares it
// with what createEvents wrote.
func checkEvent(t *testing.T, conn driver.Conn, id int64, wantNote *string) {
	t.Helper()
	var (
		name    string
		started time.Time
		note    *string
		tags    []string
	)
	ctx := clickhouse.Context(testContext(t), clickhouse.WithParameters(clickhouse.Parameters{"id": fmt.Sprint(id)}))
	row := conn.QueryRow(ctx, "SELECT name, started, note, tags FROM events WHERE id = {id:Int64}")
	if err := row.Scan(&name, &started, &note, &tags); err != nil {
		t.Fatal(err)
	}
	wantStarted := epoch.Add(time.Duration(id)*time.Second + time.Duration(id)*time.Microsecond)
	if name != fmt.Sprintf("op-%d", id%10) || !started.Equal(wantStarted) {
		t.Errorf("got name %q started %v, want op-%d %v", name, started, id%10, wantStarted)
	}
	if (note == nil) != (wantNote == nil) || note != nil && *note != *wantNote {
		t.Errorf("note = %v, want %v", deref(note), deref(wantNote))
	}
	if want := []string{fmt.Sprintf("t%d", id%3), "x\n\ny"}; !slices.Equal(tags, want) {
		t.Errorf("tags = %q, want %q", tags, want)
	}
}

func TestAnalyticQueries(t *testing.T) {
	conn := open(t, NewTestDatabase(t, StartForTest(t)))
	createEvents(t, conn)
	ctx := testContext(t)

	t.Run("JSONExtract with named parameters", func(t *testing.T) {
		got := modelTokens(t, conn, "op-3")
		if want := expectedModelTokens("op-3"); !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("quantiles", func(t *testing.T) {
		var qs []float64
		var exact uint64
		err := conn.QueryRow(ctx, "SELECT quantilesExact(0.5, 0.9, 0.99)(duration_ms), uniqExact(name) FROM events").Scan(&qs, &exact)
		if err != nil {
			t.Fatal(err)
		}
		want := []float64{5000, 9000, 9900}
		for i := range want {
			if len(qs) != len(want) || math.Abs(qs[i]-want[i]) > 1 {
				t.Fatalf("quantiles = %v, want about %v", qs, want)
			}
		}
		if exact != 10 {
			t.Fatalf("uniqExact(name) = %d, want 10", exact)
		}
	})
	t.Run("client-side positional binding", func(t *testing.T) {
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM events WHERE note IS NULL AND id < ?", 100).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 50 {
			t.Fatalf("count = %d, want 50", n)
		}
	})
}

func TestReplacingMergeTreeFinal(t *testing.T) {
	conn := open(t, NewTestDatabase(t, StartForTest(t)))
	ctx := testContext(t)
	if err := conn.Exec(ctx, `CREATE TABLE calls (id String, version UInt64, status String)
		ENGINE = ReplacingMergeTree(version) ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	// Three separate inserts make three parts, so FINAL has to merge.
	for v := uint64(1); v <= 3; v++ {
		batch, err := conn.PrepareBatch(ctx, "INSERT INTO calls (id, version, status)")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if err := batch.Append(fmt.Sprintf("call-%d", i), v, fmt.Sprintf("v%d", v)); err != nil {
				t.Fatal(err)
			}
		}
		if err := batch.Send(); err != nil {
			t.Fatal(err)
		}
	}
	var raw, final uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM calls").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT count() FROM calls FINAL WHERE status = 'v3'").Scan(&final); err != nil {
		t.Fatal(err)
	}
	if raw != 15 || final != 5 {
		t.Fatalf("raw rows %d (want 15), rows with FINAL %d (want 5)", raw, final)
	}
}

func TestErrorsCarryClickHouseException(t *testing.T) {
	conn := open(t, NewTestDatabase(t, StartForTest(t)))
	ctx := testContext(t)
	tests := []struct {
		name       string
		run        func() error
		code       int32
		status     int
		msgContain string
	}{
		{"unknown table", func() error { return conn.Exec(ctx, "SELECT * FROM missing_table") },
			60, http.StatusNotFound, "missing_table"},
		{"syntax error", func() error { return conn.Exec(ctx, "SELEC 1") },
			62, http.StatusBadRequest, "Syntax error"},
		{"unknown setting", func() error {
			return conn.Exec(clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"no_such_setting": 1})), "SELECT 1")
		}, 115, http.StatusNotFound, "no_such_setting"},
		{"bad parameter", func() error {
			return conn.QueryRow(ctx, "SELECT {n:UInt8}", clickhouse.Named("n", "not a number")).Err()
		}, 457, http.StatusInternalServerError, "not a number"},
		{"batch into missing table", func() error {
			_, err := conn.PrepareBatch(ctx, "INSERT INTO nowhere")
			return err
		}, 60, http.StatusNotFound, "nowhere"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			var ex *clickhouse.Exception
			if !errors.As(err, &ex) {
				t.Fatalf("error %v (%T) is not a *clickhouse.Exception", err, err)
			}
			if ex.Code != tc.code || !strings.Contains(ex.Message, tc.msgContain) {
				t.Errorf("got code %d message %q, want code %d and %q", ex.Code, ex.Message, tc.code, tc.msgContain)
			}
			var httpErr *clickhouse.HTTPError
			if errors.As(err, &httpErr) && httpErr.StatusCode != tc.status {
				t.Errorf("HTTP status %d, want %d", httpErr.StatusCode, tc.status)
			}
		})
	}
}

// modelTokens sums token usage per model, read out of JSON text.
func modelTokens(t *testing.T, conn driver.Conn, name string) []string {
	t.Helper()
	rows, err := conn.Query(testContext(t), `SELECT JSONExtractString(attrs, 'model') AS model,
			sum(JSONExtractInt(attrs, 'usage', 'tokens')) AS tokens, count() AS n
		FROM events WHERE name = {name:String} GROUP BY model ORDER BY model`,
		clickhouse.Named("name", name))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var model string
		var tokens int64
		var n uint64
		if err := rows.Scan(&model, &tokens, &n); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s:%d:%d", model, tokens, n))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// expectedModelTokens recomputes the JSONExtract aggregation in Go from the
// rows createEvents writes.
func expectedModelTokens(name string) []string {
	tokens, counts := map[string]int64{}, map[string]uint64{}
	for i := range eventRows {
		if fmt.Sprintf("op-%d", i%10) != name {
			continue
		}
		model := fmt.Sprintf("m%d", i%4)
		tokens[model] += int64(i % 100)
		counts[model]++
	}
	var out []string
	for model := range tokens {
		out = append(out, fmt.Sprintf("%s:%d:%d", model, tokens[model], counts[model]))
	}
	slices.Sort(out)
	return out
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
