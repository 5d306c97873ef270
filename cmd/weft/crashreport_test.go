package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// crashHelperEnv makes the test binary, run again by the test below, keep
// its crash reports in the named directory and then crash.
const crashHelperEnv = "WEFT_TEST_CRASH_DIR"

// A process that dies of a fatal error leaves the runtime's whole report,
// every goroutine's stack included, in the data directory's crash log as
// well as on stderr, and a second crash appends to the first.
func TestCrashLeavesItsReportInTheDataDir(t *testing.T) {
	if dir := os.Getenv(crashHelperEnv); dir != "" {
		if err := keepCrashReports(dir, os.Getenv); err != nil {
			t.Fatal(err)
		}
		go func() { select {} }() // a second goroutine the report must show
		panic("weft test crash")
	}
	dir := t.TempDir()
	for run := 1; run <= 2; run++ {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestCrashLeavesItsReportInTheDataDir$")
		cmd.Env = append(os.Environ(), crashHelperEnv+"="+dir, "GOTRACEBACK=")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("the helper did not crash:\n%s", out)
		}
		if !strings.Contains(string(out), "panic: weft test crash") {
			t.Fatalf("stderr lacks the report:\n%s", out)
		}
		log, err := os.ReadFile(filepath.Join(dir, CrashLogName))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(log), "panic: weft test crash"); got != run {
			t.Fatalf("crash log holds %d reports after %d crashes:\n%s", got, run, log)
		}
		// GOTRACEBACK=all shows goroutines other than the one that panicked.
		if !strings.Contains(string(log), "created by github.com/weftdev/weft/cmd/weft.TestCrashLeavesItsReportInTheDataDir") {
			t.Fatalf("the report shows only the failing goroutine:\n%s", log)
		}
		if fi, err := os.Stat(filepath.Join(dir, CrashLogName)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("crash log mode: %v %v", fi.Mode(), err)
		}
	}
}
