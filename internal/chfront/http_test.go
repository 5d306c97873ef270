package chfront

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

type httpCase struct {
	name       string
	method     string
	path       string // default "/"
	params     url.Values
	header     http.Header
	body       []byte
	wantStatus int
	wantBody   string
	wantHeader http.Header
	decode     func(t *testing.T, body []byte) []byte
}

func gzipped(t *testing.T, s string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gunzip(t *testing.T, b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func unblock(t *testing.T, b []byte) []byte {
	out, err := io.ReadAll(newBlockReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHTTPInterface drives the front end as curl would. Cases run in order:
// later ones read what earlier ones inserted.
func TestHTTPInterface(t *testing.T) {
	srv := StartForTest(t)
	db := NewTestDatabase(t, srv)
	inDB := func(kv ...string) url.Values {
		v := url.Values{"database": {db}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	cases := []httpCase{
		{name: "ping", method: "GET", path: "/ping", wantStatus: 200, wantBody: "Ok.\n"},
		{name: "bare GET", method: "GET", wantStatus: 200, wantBody: "Ok.\n"},
		{name: "GET query", method: "GET", params: url.Values{"query": {"SELECT 1"}}, wantStatus: 200, wantBody: "1\n",
			wantHeader: http.Header{"X-Clickhouse-Format": {"TabSeparated"}, "X-Clickhouse-Timezone": {srvTimezone(t, srv)}}},
		{name: "POST body with FORMAT", method: "POST", body: []byte("SELECT 1 AS one FORMAT JSONEachRow"), wantStatus: 200, wantBody: `{"one":1}` + "\n"},
		{name: "default_format", method: "POST", params: url.Values{"default_format": {"CSV"}}, body: []byte("SELECT 'a', 2"), wantStatus: 200, wantBody: "\"a\",2\n"},
		{name: "query parameter", method: "POST", params: url.Values{"param_x": {"a\\tb"}}, body: []byte("SELECT {x:String} = 'a\\tb'"), wantStatus: 200, wantBody: "1\n"},
		{name: "create table", method: "POST", params: inDB(), body: []byte("CREATE TABLE t (n UInt32, s String) ENGINE = MergeTree ORDER BY n"), wantStatus: 200},
		{name: "insert TSV body", method: "POST", params: inDB("query", "INSERT INTO t FORMAT TSV"), body: []byte("1\ta\n2\tb\n"), wantStatus: 200},
		{name: "insert CSV inline with blank line", method: "POST", params: inDB(), body: []byte("INSERT INTO t FORMAT CSV\n3,\"x\n\ny\"\n"), wantStatus: 200},
		{name: "insert VALUES body", method: "POST", params: inDB("query", "INSERT INTO t VALUES"), body: []byte("(4, 'd'), (5, 'e')"), wantStatus: 200},
		{name: "insert after a comment", method: "POST", params: inDB("query", "INSERT INTO t -- trailing comment\nFORMAT TSV"),
			body: []byte("8\th\n"), wantStatus: 200},
		{name: "insert VALUES in query only", method: "POST", params: inDB("query", "INSERT INTO t SETTINGS async_insert = 0 VALUES (6, 'f')"), wantStatus: 200},
		{name: "insert gzip body", method: "POST", params: inDB("query", "INSERT INTO t FORMAT JSONEachRow"),
			header: http.Header{"Content-Encoding": {"gzip"}}, body: gzipped(t, `{"n":7,"s":"g"}`), wantStatus: 200},
		{name: "read back", method: "POST", params: inDB(), body: []byte("SELECT n, s FROM t ORDER BY n FORMAT JSONCompactEachRow"), wantStatus: 200,
			wantBody: `[1, "a"]` + "\n" + `[2, "b"]` + "\n" + `[3, "x\n\ny"]` + "\n" + `[4, "d"]` + "\n" + `[5, "e"]` + "\n" + `[6, "f"]` + "\n" + `[7, "g"]` + "\n" + `[8, "h"]` + "\n"},
		{name: "gzip request", method: "POST", header: http.Header{"Content-Encoding": {"gzip"}}, body: gzipped(t, "SELECT 42"), wantStatus: 200, wantBody: "42\n"},
		{name: "gzip response", method: "POST", params: url.Values{"enable_http_compression": {"1"}},
			header: http.Header{"Accept-Encoding": {"gzip"}}, body: []byte("SELECT 'zipped'"), wantStatus: 200, wantBody: "zipped\n",
			wantHeader: http.Header{"Content-Encoding": {"gzip"}}, decode: gunzip},
		{name: "block compressed response", method: "POST", params: url.Values{"compress": {"1"}, "network_compression_method": {"ZSTD"}},
			body: []byte("SELECT 'blocks'"), wantStatus: 200, wantBody: "blocks\n", decode: unblock},
		{name: "USE does not outlive its request", method: "POST", body: []byte("USE system"), wantStatus: 200},
		{name: "current database is default", method: "POST", body: []byte("SELECT currentDatabase()"), wantStatus: 200, wantBody: "default\n"},
		{name: "database parameter", method: "POST", params: url.Values{"database": {"system"}}, body: []byte("SELECT currentDatabase()"), wantStatus: 200, wantBody: "system\n"},
		{name: "unknown setting", method: "POST", params: url.Values{"no_such_setting": {"1"}}, body: []byte("SELECT 1"), wantStatus: 404,
			wantHeader: http.Header{"X-Clickhouse-Exception-Code": {"115"}}},
		{name: "unknown table", method: "POST", body: []byte("SELECT * FROM nope"), wantStatus: 404,
			wantHeader: http.Header{"X-Clickhouse-Exception-Code": {"60"}}},
		{name: "sessions are refused", method: "POST", params: url.Values{"session_id": {"s1"}}, body: []byte("SELECT 1"), wantStatus: 501,
			wantHeader: http.Header{"X-Clickhouse-Exception-Code": {"48"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runHTTPCase(t, srv, tc) })
	}
}

func runHTTPCase(t *testing.T, srv *Server, tc httpCase) {
	t.Helper()
	path := tc.path
	if path == "" {
		path = "/"
	}
	req, err := http.NewRequestWithContext(testContext(t), tc.method, srv.URL()+path+"?"+tc.params.Encode(), bytes.NewReader(tc.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range tc.header {
		req.Header[k] = vs
	}
	// Keep Go from negotiating and undoing gzip itself.
	req.Header.Set("Accept-Encoding", req.Header.Get("Accept-Encoding"))
	res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != tc.wantStatus {
		t.Fatalf("status %d, want %d; body %q", res.StatusCode, tc.wantStatus, body)
	}
	for k := range tc.wantHeader {
		if got := res.Header.Get(k); got != tc.wantHeader.Get(k) {
			t.Errorf("header %s = %q, want %q", k, got, tc.wantHeader.Get(k))
		}
	}
	if tc.decode != nil {
		body = tc.decode(t, body)
	}
	if tc.wantStatus == 200 && string(body) != tc.wantBody {
		t.Errorf("body %q, want %q", body, tc.wantBody)
	}
	if tc.wantStatus != 200 && !strings.HasPrefix(string(body), "Code: "+tc.wantHeader.Get("X-Clickhouse-Exception-Code")+". DB::Exception") {
		t.Errorf("error body %q does not start with the ClickHouse exception text", body)
	}
}

func srvTimezone(t *testing.T, srv *Server) string {
	t.Helper()
	res, err := srv.eng.Query(testContext(t), chdbQuery("SELECT timezone()"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(res.Data))
}
