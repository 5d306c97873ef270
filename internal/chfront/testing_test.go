package chfront

import (
	"fmt"
	"strings"
	"testing"
)

// fatalRecorder captures a Fatal call instead of failing the real test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	panic(f)
}

func TestStartForTestNeedsRunTests(t *testing.T) {
	shared.mu.Lock()
	shared.running = false
	shared.mu.Unlock()
	defer func() {
		shared.mu.Lock()
		shared.running = true
		shared.mu.Unlock()
	}()
	rec := &fatalRecorder{TB: t}
	func() {
		defer func() {
			if r := recover(); r != rec {
				panic(r)
			}
		}()
		StartForTest(rec)
	}()
	if !strings.Contains(rec.msg, "os.Exit(chfront.RunTests(m))") {
		t.Fatalf("Fatal message %q does not say how to fix it", rec.msg)
	}
}

func TestNewTestDatabaseIsDroppedAfterTheTest(t *testing.T) {
	srv := StartForTest(t)
	var name string
	t.Run("inner", func(t *testing.T) {
		name = NewTestDatabase(t, srv)
		if err := srv.Exec(testContext(t), "CREATE TABLE "+name+".x (a UInt8) ENGINE = Memory"); err != nil {
			t.Fatal(err)
		}
	})
	if !strings.HasPrefix(name, "t_testnewtestdatabase") {
		t.Fatalf("unexpected database name %q", name)
	}
	if err := srv.Exec(testContext(t), "SELECT * FROM "+name+".x"); err == nil {
		t.Fatalf("database %s still exists after its test ended", name)
	}
}
