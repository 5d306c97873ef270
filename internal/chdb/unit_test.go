package chdb

import (
	"path/filepath"
	"testing"
)

func TestLibraryPath(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name, lib, cache, want string
	}{
		{name: "explicit", lib: "/opt/libchdb.so", cache: "/c", want: "/opt/libchdb.so"},
		{name: "cache dir", cache: "/c", want: "/c/chdb/libchdb.so"},
		{name: "home", want: filepath.Join(home, ".cache/weft/chdb/libchdb.so")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HOME", home)
			t.Setenv(EnvLibrary, tc.lib)
			t.Setenv("WEFT_CACHE_DIR", tc.cache)
			got, err := LibraryPath()
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestParseError(t *testing.T) {
	tests := []struct {
		text, name string
		code       int
	}{
		{"Code: 60. DB::Exception: Unknown table 'x'. (UNKNOWN_TABLE)", "UNKNOWN_TABLE", 60},
		{"Code: 62. DB::Exception: Syntax error near '(NOT_A_NAME)'. (SYNTAX_ERROR) (version 26.5.1.1)\n", "SYNTAX_ERROR", 62},
		{"something odd", "", 0},
	}
	for _, tc := range tests {
		e := parseError(tc.text)
		if e.Code != tc.code || e.Name != tc.name {
			t.Errorf("parseError(%q) = %d %s, want %d %s", tc.text, e.Code, e.Name, tc.code, tc.name)
		}
	}
}

func TestQuoting(t *testing.T) {
	tests := []struct{ got, want string }{
		{QuoteString(`it's a \ test`), `'it\'s a \\ test'`},
		{QuoteIdentifier("we`ird"), "`we\\`ird`"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
	set, err := setStatement([]Setting{{"a", "1"}, {"b.c", "x'y"}})
	if err != nil || set != `SET a = '1', b.c = 'x\'y'` {
		t.Fatalf("setStatement = %q, %v", set, err)
	}
}
