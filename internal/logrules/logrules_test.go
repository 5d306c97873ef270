package logrules

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSites checks the finder and the rule on small sources: which calls
// count as WARN or ERROR slog calls, and which messages pass.
func TestSites(t *testing.T) {
	good := `"storage: a write failed; retried in 5s; if it repeats, check the disk"`
	for _, tc := range []struct {
		name, call string
		level      string // "" when the call is not a WARN or ERROR slog call
		problem    string // a part of the problem, "" when the message passes
	}{
		{"warn with both parts", `s.logger.Warn(` + good + `, "err", err)`, "WARN", ""},
		{"error on a bare logger", `logger.Error(` + good + `)`, "ERROR", ""},
		{"log field", `j.log.Warn(` + good + `)`, "WARN", ""},
		{"exported logger field", `t.o.Logger.Error(` + good + `)`, "ERROR", ""},
		{"context variant", `a.logger.WarnContext(ctx, ` + good + `)`, "WARN", ""},
		{"slog Log", `l.logger.Log(ctx, slog.LevelError, ` + good + `)`, "ERROR", ""},
		{"limited Log", `p.limited.Log(slog.LevelWarn, "fetch", ` + good + `, "err", err)`, "WARN", ""},
		{"concatenation", `logger.Warn(what+" server stopped; the API is unaffected, restart weft to serve it again")`, "WARN", ""},
		{"only the step", `s.logger.Warn("reading retention changes", "err", err)`, "WARN", `no "; "`},
		{"nothing after", `s.logger.Error("the store refused a record; kept", "err", err)`, "ERROR", "after"},
		{"nothing before", `s.logger.Warn("failed; retrying later, check the store", "err", err)`, "WARN", "before"},
		{"too short", `s.logger.Warn("fetch failed; retrying at once")`, "WARN", "words"},
		{"not constant", `s.logger.Warn(msg, "err", err)`, "WARN", "not a constant"},
		{"info is free", `s.logger.Info("listening")`, "", ""},
		{"debug Log is free", `l.Log(slog.LevelDebug, "k", "fetch ended")`, "", ""},
		{"test error", `t.Error("a cancelled query yielded a row")`, "", ""},
		{"http error", `http.Error(w, "method not allowed", 405)`, "", ""},
		{"error value", `msg := err.Error()`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "package p\nfunc f() {\n" + tc.call + "\n}\n"
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "p.go", src, 0)
			if err != nil {
				t.Fatal(err)
			}
			sites := Sites(fset, f)
			if tc.level == "" {
				if len(sites) != 0 {
					t.Fatalf("found %+v, want no site", sites)
				}
				return
			}
			if len(sites) != 1 {
				t.Fatalf("found %d sites, want 1", len(sites))
			}
			if sites[0].Level != tc.level {
				t.Errorf("level %s, want %s", sites[0].Level, tc.level)
			}
			got := sites[0].Problem()
			switch {
			case tc.problem == "" && got != "":
				t.Errorf("problem %q in %q, want none", got, sites[0].Message)
			case tc.problem != "" && !strings.Contains(got, tc.problem):
				t.Errorf("problem %q, want one about %q", got, tc.problem)
			}
		})
	}
}

// TestWarningsSayWhatToDo checks every WARN and ERROR slog call in the
// module's non-test code (e2e and the benchmark tool aside).
func TestWarningsSayWhatToDo(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	var n int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (strings.HasPrefix(base, ".") || base == "testdata" || base == "node_modules" ||
				base == "vendor" || rel == "e2e" || rel == "cmd/weft-bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, s := range Sites(fset, f) {
			n++
			if p := s.Problem(); p != "" {
				pos := s.Pos
				pos.Filename = rel
				t.Errorf("%s: %s message %q: %s", pos, s.Level, s.Message, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d WARN and ERROR sites checked", n)
	// The finder goes by names; far fewer sites means it lost track.
	if n < 80 {
		t.Errorf("found %d WARN and ERROR sites, want at least 80: has the loggers' naming changed?", n)
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
