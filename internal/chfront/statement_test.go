package chfront

import (
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/weftdev/weft/internal/chdb"
)

func TestParseDataInsert(t *testing.T) {
	tests := []struct {
		name     string
		sql      string
		ok       bool
		head     string
		settings string
		format   string
		data     string
	}{
		{name: "native batch", sql: "INSERT INTO `db`.`t` (`a`, `b`) FORMAT Native\n",
			ok: true, head: "INSERT INTO `db`.`t` (`a`, `b`)", format: "Native"},
		{name: "inline data keeps blank lines", sql: "insert into t format CSV  \r\n1,\"a\n\nb\"\n",
			ok: true, head: "insert into t", format: "CSV", data: "1,\"a\n\nb\"\n"},
		{name: "values", sql: "INSERT INTO t VALUES (1, 'a')",
			ok: true, head: "INSERT INTO t", format: "Values", data: " (1, 'a')"},
		{name: "settings move after FROM INFILE", sql: "INSERT INTO t SETTINGS async_insert=1, x='FORMAT' FORMAT JSONEachRow\n{}",
			ok: true, head: "INSERT INTO t", settings: "SETTINGS async_insert=1, x='FORMAT'", format: "JSONEachRow", data: "{}"},
		{name: "keywords inside columns and comments are ignored", sql: "INSERT /* VALUES */ INTO t (`format`, \"values\") -- SELECT\nFORMAT TSV\n",
			ok: true, head: "INSERT /* VALUES */ INTO t (`format`, \"values\") -- SELECT", format: "TSV"},
		{name: "table function arguments", sql: "INSERT INTO FUNCTION file('x.csv', 'CSV', 'a String') FORMAT CSV\n",
			ok: true, head: "INSERT INTO FUNCTION file('x.csv', 'CSV', 'a String')", format: "CSV"},
		{name: "insert select", sql: "INSERT INTO t SELECT * FROM u"},
		{name: "insert with select", sql: "INSERT INTO t WITH 1 AS x SELECT x"},
		{name: "from infile", sql: "INSERT INTO t FROM INFILE 'f' FORMAT CSV"},
		{name: "not an insert", sql: "SELECT 1 FORMAT Native"},
		{name: "no format", sql: "INSERT INTO t"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ins, ok := parseDataInsert(tc.sql)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			got := []string{ins.head, ins.settings, ins.format, tc.sql[ins.dataStart:]}
			want := []string{tc.head, tc.settings, tc.format, tc.data}
			if !slices.Equal(got, want) {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
	}
}

func TestFromInfile(t *testing.T) {
	ins := dataInsert{head: "INSERT INTO t -- c", settings: "SETTINGS a=1 -- d", format: "Native"}
	want := "INSERT INTO t -- c\nFROM INFILE '/tmp/it\\'s'\nSETTINGS a=1 -- d\nFORMAT Native"
	if got := ins.fromInfile("/tmp/it's"); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestFirstKeywordAndHello(t *testing.T) {
	tests := []struct {
		sql   string
		first string
		hello bool
	}{
		{sql: "  -- note\n use db", first: "USE"},
		{sql: "/* x */SET a = 1", first: "SET"},
		{sql: "(SELECT 1)", first: ""},
		{sql: helloQuery, first: "SELECT", hello: true},
		{sql: "SELECT  displayName(),\n version(), revision(), timezone()", first: "SELECT", hello: true},
		{sql: "SELECT displayName(), version(), revision()", first: "SELECT"},
	}
	for _, tc := range tests {
		if got := firstKeyword(tc.sql); got != tc.first {
			t.Errorf("firstKeyword(%q) = %q, want %q", tc.sql, got, tc.first)
		}
		if got := isHello(tc.sql); got != tc.hello {
			t.Errorf("isHello(%q) = %v, want %v", tc.sql, got, tc.hello)
		}
	}
}

func TestParseRequestSortsParametersFromSettings(t *testing.T) {
	r := httptest.NewRequest("POST", "/?query=SELECT+1&database=d&default_format=Native&param_b=2&param_a=1"+
		"&max_threads=2&client_protocol_version=54460&compress=1&network_compression_method=ZSTD&async_insert=1&query_id=q", nil)
	req, err := parseRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	wantParams := []chdb.Param{{Name: "a", Value: "1"}, {Name: "b", Value: "2"}}
	wantSettings := []chdb.Setting{{Name: "async_insert", Value: "1"}, {Name: "max_threads", Value: "2"}}
	if !slices.Equal(req.query.Params, wantParams) || !slices.Equal(req.query.Settings, wantSettings) {
		t.Fatalf("params %v settings %v, want %v %v", req.query.Params, req.query.Settings, wantParams, wantSettings)
	}
	if req.query.Database != "d" || req.query.Format != "Native" || req.revision != 54460 || !req.compress ||
		req.method.String() != "ZSTD" || req.queryID != "q" || req.sqlParam != "SELECT 1" {
		t.Fatalf("unexpected request %+v", req)
	}
}

func TestStatusOf(t *testing.T) {
	tests := []struct {
		name string
		want int
	}{
		{"UNKNOWN_TABLE", 404}, {"SYNTAX_ERROR", 400}, {"CANNOT_PARSE_DATETIME", 400},
		{"NOT_IMPLEMENTED", 501}, {"MEMORY_LIMIT_EXCEEDED", 500}, {"", 500},
	}
	for _, tc := range tests {
		if got := statusOf(&chdb.Error{Name: tc.name}); got != tc.want {
			t.Errorf("statusOf(%s) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestQueryIDIsGeneratedWhenMissing(t *testing.T) {
	a, err := parseRequest(httptest.NewRequest("POST", "/", nil))
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseRequest(httptest.NewRequest("POST", "/", nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.queryID) != 36 || a.queryID == b.queryID {
		t.Fatalf("query ids %q and %q: want two distinct UUIDs", a.queryID, b.queryID)
	}
}
