package chdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testEngine is the engine of this test binary; one per process is all
// libchdb allows. TestMain closes it before exit, as -race requires.
var testEngine struct {
	eng *Engine
	err error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "weft-chdb-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testEngine.eng, testEngine.err = Open(context.Background(), Config{Path: dir, PoolSize: 3})
	code := m.Run()
	if testEngine.eng != nil {
		testEngine.eng.Close()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func engine(t *testing.T) *Engine {
	t.Helper()
	if testEngine.err != nil {
		t.Fatalf("open engine: %v", testEngine.err)
	}
	return testEngine.eng
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestQuery(t *testing.T) {
	e := engine(t)
	tests := []struct {
		name string
		q    Query
		want string
	}{
		{"default format", Query{SQL: "SELECT 1, 'a'"}, "1\ta\n"},
		{"explicit format", Query{SQL: "SELECT 1 AS x", Format: "JSONEachRow"}, `{"x":1}` + "\n"},
		{"FORMAT clause wins", Query{SQL: "SELECT 2 AS y FORMAT CSV", Format: "JSONEachRow"}, "2\n"},
		{"parameters", Query{SQL: "SELECT {s:String}, {n:Nullable(Int64)}, {a:Array(UInt8)}",
			Params: []Param{{"s", `x\ty`}, {"n", `\N`}, {"a", "[1,2]"}}}, "x\\ty\t\\N\t[1,2]\n"},
		{"parameter with NUL byte", Query{SQL: "SELECT length({s:String})", Params: []Param{{"s", "a\x00b"}}}, "3\n"},
		{"database", Query{SQL: "SELECT currentDatabase()", Database: "system"}, "system\n"},
		{"back to default", Query{SQL: "SELECT currentDatabase()"}, "default\n"},
		{"settings", Query{SQL: "SELECT getSetting('max_block_size'), getSetting('format_csv_delimiter')",
			Settings: []Setting{{"max_block_size", "1234"}, {"format_csv_delimiter", ";"}}}, "1234\t;\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.Query(ctx(t), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Data) != tc.want {
				t.Fatalf("got %q, want %q", res.Data, tc.want)
			}
		})
	}
}

func TestQueryErrors(t *testing.T) {
	e := engine(t)
	tests := []struct {
		name     string
		q        Query
		code     int
		codeName string
	}{
		{"unknown table", Query{SQL: "SELECT * FROM no_such_table"}, 60, "UNKNOWN_TABLE"},
		{"syntax", Query{SQL: "SELEC 1"}, 62, "SYNTAX_ERROR"},
		{"unknown database", Query{SQL: "SELECT 1", Database: "no_such_db"}, 81, "UNKNOWN_DATABASE"},
		{"unknown setting", Query{SQL: "SELECT 1", Settings: []Setting{{"no_such_setting", "1"}}}, 115, "UNKNOWN_SETTING"},
		{"invalid setting name", Query{SQL: "SELECT 1", Settings: []Setting{{"a=1; DROP", "1"}}}, 115, "UNKNOWN_SETTING"},
		{"missing parameter", Query{SQL: "SELECT {p:String}"}, 456, "UNKNOWN_QUERY_PARAMETER"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Query(ctx(t), tc.q)
			var ex *Error
			if !errors.As(err, &ex) {
				t.Fatalf("error %v (%T) is not *Error", err, err)
			}
			if ex.Code != tc.code || ex.Name != tc.codeName || !strings.HasPrefix(ex.Message, fmt.Sprintf("Code: %d.", tc.code)) {
				t.Fatalf("got %d %s %q, want %d %s", ex.Code, ex.Name, ex.Message, tc.code, tc.codeName)
			}
		})
	}
}

func TestIsolatedStatementsDoNotLeak(t *testing.T) {
	e := engine(t)
	for _, sql := range []string{"SET max_block_size = 777", "USE system"} {
		if _, err := e.Query(ctx(t), Query{SQL: sql, Isolated: true}); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	// Every pooled connection must still be at defaults.
	for range 2 * DefaultPoolSize {
		res, err := e.Query(ctx(t), Query{SQL: "SELECT getSetting('max_block_size') != 777, currentDatabase()"})
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Data) != "1\tdefault\n" {
			t.Fatalf("session state leaked into the pool: %q", res.Data)
		}
	}
}

func TestConcurrentQueries(t *testing.T) {
	e := engine(t)
	c := ctx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 10 {
				want := fmt.Sprint(g*100 + i)
				res, err := e.Query(c, Query{SQL: "SELECT {v:UInt32}", Params: []Param{{"v", want}}})
				if err != nil {
					errs <- err
					return
				}
				if got := strings.TrimSpace(string(res.Data)); got != want {
					errs <- fmt.Errorf("got %s, want %s", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestInsertStats(t *testing.T) {
	e := engine(t)
	if _, err := e.Query(ctx(t), Query{SQL: "CREATE TABLE stats (n UInt64) ENGINE = MergeTree ORDER BY n"}); err != nil {
		t.Fatal(err)
	}
	ins, err := e.Query(ctx(t), Query{SQL: "INSERT INTO stats SELECT number FROM numbers(1000)"})
	if err != nil {
		t.Fatal(err)
	}
	if ins.RowsWritten != 1000 {
		t.Fatalf("insert wrote %d rows, want 1000", ins.RowsWritten)
	}
	res, err := e.Query(ctx(t), Query{SQL: "SELECT sum(n) FROM stats"})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Data) != "499500\n" || res.RowsRead != 1000 || res.ResultRows != 1 {
		t.Fatalf("got %q, %d rows read, %d result rows; want 499500, 1000, 1", res.Data, res.RowsRead, res.ResultRows)
	}
}

// After the engine boots, a nil dereference must still be a recoverable Go
// panic, not a crash in the engine's signal handler.
func TestNilDereferenceStillPanics(t *testing.T) {
	engine(t)
	var p *struct{ x int }
	recovered := func() (r any) {
		defer func() { r = recover() }()
		return p.x
	}()
	if recovered == nil {
		t.Fatal("nil dereference did not panic")
	}
}

func TestOneEnginePerProcess(t *testing.T) {
	e := engine(t)
	_, err := Open(ctx(t), Config{Path: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), e.Path()) {
		t.Fatalf("second engine: got %v, want an error naming %s", err, e.Path())
	}
	other := filepath.Join(t.TempDir(), "libchdb.so")
	if err := os.WriteFile(other, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx(t), Config{Path: t.TempDir(), Library: other}); err == nil || !strings.Contains(err.Error(), "already loaded") {
		t.Fatalf("second library: got %v, want an 'already loaded' error", err)
	}
}

func TestMissingLibrary(t *testing.T) {
	_, err := Open(ctx(t), Config{Path: t.TempDir(), Library: filepath.Join(t.TempDir(), "nope", "libchdb.so")})
	if !errors.Is(err, ErrLibraryMissing) || !strings.Contains(err.Error(), "scripts/install-libchdb.sh") {
		t.Fatalf("got %v, want ErrLibraryMissing with the install hint", err)
	}
}

func TestQueryAfterClose(t *testing.T) {
	e := &Engine{closed: true}
	if _, err := e.Query(ctx(t), Query{SQL: "SELECT 1"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v, want ErrClosed", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
