package traceapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/weftdev/weft/auth"
)

// formPart is one part of a multipart upload.
type formPart struct {
	name, filename, contentType string
	body                        []byte
}

func multipartBody(t testing.TB, parts ...formPart) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		var dst io.Writer
		var err error
		if p.filename == "" {
			dst, err = w.CreateFormField(p.name)
		} else {
			h := make(map[string][]string)
			h["Content-Disposition"] = []string{`form-data; name="` + p.name + `"; filename="` + p.filename + `"`}
			h["Content-Type"] = []string{p.contentType}
			dst, err = w.CreatePart(h)
		}
		if err != nil {
			t.Fatal(err)
		}
		_, _ = dst.Write(p.body)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), &buf
}

func (e *storeEnv) upload(t testing.TB, path string, parts ...formPart) (int, map[string]any) {
	t.Helper()
	ct, body := multipartBody(t, parts...)
	rec := e.do(path, ct, body)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

func formText(name, value string) formPart { return formPart{name: name, body: []byte(value)} }

func formFile(content []byte) formPart {
	return formPart{name: "file", filename: "obj.py", contentType: "application/octet-stream", body: content}
}

func TestFileCreateTSClientSample(t *testing.T) {
	e := newStoreEnv(t)
	body, err := os.ReadFile("testdata/03-file-create-op-source.multipart.txt")
	if err != nil {
		t.Fatal(err)
	}
	rec := e.do("/file/create", "multipart/form-data; boundary=----formdata-undici-081237212782", bytes.NewReader(body))
	const want = "IbAYBvUsLcYw62OYmvsrPpCJolzeU8Lg8ugKzsvhbUI" // computed by the SDK
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"digest":"`+want+`"`) {
		t.Fatalf("status %d body %s, want digest %s", rec.Code, rec.Body.String(), want)
	}
	content := e.do("/file/content", "application/json", strings.NewReader(`{"project_id":"acme/demo","digest":"`+want+`"}`))
	if content.Code != http.StatusOK || !strings.HasPrefix(content.Body.String(), "async function pipeline(x) {") ||
		content.Header().Get("Content-Type") != "application/octet-stream" || content.Header().Get("Content-Length") != "153" {
		t.Fatalf("content: %d %q %v", content.Code, content.Body.String(), content.Header())
	}
}

func TestFileCreateImageSample(t *testing.T) {
	raw, err := os.ReadFile("testdata/13-file-create-image.json")
	if err != nil {
		t.Fatal(err)
	}
	var sample struct {
		Request struct {
			Body struct {
				Parts []struct{ Name, Filename, Text, Base64, Digest string }
			}
		}
	}
	if err := json.Unmarshal(raw, &sample); err != nil {
		t.Fatal(err)
	}
	parts := sample.Request.Body.Parts
	img, err := base64.StdEncoding.DecodeString(parts[1].Base64)
	if err != nil {
		t.Fatal(err)
	}
	e := newStoreEnv(t)
	code, out := e.upload(t, "/file/create", formText("project_id", parts[0].Text),
		formPart{name: "file", filename: parts[1].Filename, contentType: "image/png", body: img})
	if code != http.StatusOK || out["digest"] != parts[1].Digest {
		t.Fatalf("image upload: %d %v, want digest %s", code, out, parts[1].Digest)
	}
}

func TestFileExpectedDigestAndStats(t *testing.T) {
	e := newStoreEnv(t)
	content := []byte("print('hello')\n")
	if code, out := e.upload(t, "/files/create", formText("project_id", "acme/p"), formText("expected_digest", "wrong"), formFile(content)); code != http.StatusConflict {
		t.Fatalf("mismatching expected_digest: %d %v, want 409", code, out)
	}
	code, out := e.upload(t, "/files/create", formText("project_id", "acme/p"), formFile(content))
	if code != http.StatusOK {
		t.Fatalf("upload: %d %v", code, out)
	}
	if code, again := e.upload(t, "/files/create", formText("project_id", "acme/p"), formText("expected_digest", out["digest"].(string)), formFile(content)); code != http.StatusOK || again["digest"] != out["digest"] {
		t.Fatalf("idempotent upload with the right expected_digest: %d %v", code, again)
	}
	for _, path := range []string{"/files/query_stats", "/files/stats"} {
		stats := e.expectStatus(t, path, `{"project_id":"acme/p"}`, http.StatusOK)
		if stats["total_size_bytes"] != float64(len(content)) {
			t.Fatalf("%s: %v, want %d bytes", path, stats, len(content))
		}
	}
	e.expectStatus(t, "/files/stats", `{"project_id":"acme/p","extra":1}`, http.StatusUnprocessableEntity)
}

func TestFileBadUploads(t *testing.T) {
	e := newStoreEnv(t)
	ct, good := multipartBody(t, formText("project_id", "acme/p"), formFile([]byte("abc")))
	cases := []struct {
		name        string
		contentType string
		body        io.Reader
		want        int
	}{
		{"json instead of multipart", "application/json", strings.NewReader(`{"project_id":"acme/p"}`), http.StatusBadRequest},
		{"no boundary", "multipart/form-data", strings.NewReader("x"), http.StatusBadRequest},
		{"truncated body", ct, bytes.NewReader(good.Bytes()[:good.Len()-20]), http.StatusBadRequest},
		{"garbage", ct, strings.NewReader("not a multipart body at all"), http.StatusUnprocessableEntity},
	}
	for _, c := range cases {
		if rec := e.do("/file/create", c.contentType, c.body); rec.Code != c.want {
			t.Errorf("%s: status %d (%s), want %d", c.name, rec.Code, rec.Body.String(), c.want)
		}
	}
	forms := []struct {
		name  string
		parts []formPart
		want  int
	}{
		{"missing project_id", []formPart{formFile([]byte("abc"))}, http.StatusUnprocessableEntity},
		{"missing file", []formPart{formText("project_id", "acme/p")}, http.StatusUnprocessableEntity},
		{"file before project_id", []formPart{formFile([]byte("abc")), formText("project_id", "acme/p")}, http.StatusUnprocessableEntity},
		{"bad project_id", []formPart{formText("project_id", "no-slash"), formFile([]byte("abc"))}, http.StatusBadRequest},
		{"other entity", []formPart{formText("project_id", "other/p"), formFile([]byte("abc"))}, http.StatusForbidden},
		{"oversize file", []formPart{formText("project_id", "acme/p"), formFile(make([]byte, testMaxFile+1))}, http.StatusRequestEntityTooLarge},
		{"two files", []formPart{formText("project_id", "acme/p"), formFile([]byte("abc")), formFile([]byte("def"))}, http.StatusBadRequest},
		{"file name not UTF-8", []formPart{formText("project_id", "acme/p"), {name: "file", filename: "a\xff.py", contentType: "text/plain", body: []byte("x")}}, http.StatusBadRequest},
	}
	for _, c := range forms {
		if code, out := e.upload(t, "/file/create", c.parts...); code != c.want {
			t.Errorf("%s: status %d (%v), want %d", c.name, code, out, c.want)
		}
	}
	if stats := e.expectStatus(t, "/files/query_stats", `{"project_id":"acme/p"}`, http.StatusOK); stats["total_size_bytes"] != 0.0 {
		t.Fatalf("refused uploads stored %v bytes", stats["total_size_bytes"])
	}
}

func TestFileUploadAtTheLimit(t *testing.T) {
	e := newStoreEnv(t)
	if code, out := e.upload(t, "/file/create", formText("project_id", "acme/p"), formFile(make([]byte, testMaxFile))); code != http.StatusOK {
		t.Fatalf("a file of exactly the limit: %d %v", code, out)
	}
}

func TestFileContentErrors(t *testing.T) {
	e := newStoreEnv(t)
	code, out := e.upload(t, "/file/create", formText("project_id", "acme/p"), formFile([]byte("secret")))
	if code != http.StatusOK {
		t.Fatal(code, out)
	}
	dg := out["digest"].(string)
	e.expectStatus(t, "/file/content", `{"project_id":"acme/p","digest":"unknown"}`, http.StatusNotFound)
	e.expectStatus(t, "/files/content", `{"project_id":"acme/other","digest":"`+dg+`"}`, http.StatusNotFound)
	e.expectStatus(t, "/file/content", `{"project_id":"other/p","digest":"`+dg+`"}`, http.StatusForbidden)
	e.expectStatus(t, "/file/content", `{"project_id":"acme/p"}`, http.StatusUnprocessableEntity)
	e.expectStatus(t, "/file/content", `{"project_id":"acme/p","digest":5}`, http.StatusUnprocessableEntity)
	e.expectStatus(t, "/file/content", `[1,2]`, http.StatusUnprocessableEntity)
}

func TestFileCreateNeedsWriteRole(t *testing.T) {
	e := newStoreEnv(t)
	e.caller = auth.Principal{KeyID: "k2", UserID: "viewer", Entity: "acme", Role: auth.RoleViewer}
	if code, out := e.upload(t, "/file/create", formText("project_id", "acme/p"), formFile([]byte("abc"))); code != http.StatusForbidden {
		t.Fatalf("viewer upload: %d %v, want 403", code, out)
	}
	e.expectStatus(t, "/files/query_stats", `{"project_id":"acme/p"}`, http.StatusOK)
}

func BenchmarkFileUpload(b *testing.B) {
	const size = 64 << 20
	e := newStoreEnvLimit(b, size)
	content := make([]byte, size)
	for i := range content {
		content[i] = byte(i*31 + i>>12)
	}
	ct, buf := multipartBody(b, formText("project_id", "acme/bench"), formFile(content))
	body := buf.Bytes()
	at := bytes.Index(body, content[:256])
	b.SetBytes(size)
	b.ResetTimer()
	for i := range b.N {
		body[at], body[at+1] = byte(i), byte(i>>8) // a new digest each time: no idempotent shortcut
		if rec := e.do("/file/create", ct, bytes.NewReader(body)); rec.Code != http.StatusOK {
			b.Fatalf("upload: %d %s", rec.Code, rec.Body.String())
		}
	}
}
