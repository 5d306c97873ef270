package webui_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/browsertest"
	"github.com/weftdev/weft/webui"
)

// TestBrowserRefLinksStayOnOrigin: refs in call data become links only
// to weft's own pages, built from valid entity and project names; a ref
// crafted to point elsewhere (a "/\host" path is another site to a
// browser) stays text.
func TestBrowserRefLinksStayOnOrigin(t *testing.T) {
	ui, err := webui.New(apiStub)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(ui)
	t.Cleanup(hs.Close)
	p := page{t: t, ctx: browsertest.New(t, 60*time.Second), url: hs.URL}
	p.open("/signin")
	tests := []struct {
		ref, want string // want "" for no link
	}{
		{`weave:///acme/app/call/0192c6a3-8b2e-7f3a-9c1d-2e4f6a8b0c1d`, "/acme/app/calls/0192c6a3-8b2e-7f3a-9c1d-2e4f6a8b0c1d"},
		{`weave:///acme/app/object/evals:abc123`, "/acme/app/objects/evals/abc123"},
		{`weave:///acme/app/op/chat:*`, "/acme/app/objects/chat/*"},
		{`weave:///my-team_1/v1.2/object/data`, "/my-team_1/v1.2/objects/data"},
		{`weave:///\evil.example/app/call/x`, ""},
		{`weave:///\\evil.example/app/call/x`, ""},
		{`weave:///acme/\evil.example/call/x`, ""},
		{`weave:///acme/app/call/..`, ""},
		{`weave:///../app/call/x`, ""},
		{`weave:///a b/app/call/x`, ""},
		{`weave:///acme/app/object/..:..`, ""},
		{`weave:///%2F%2Fevil.example/app/call/x`, ""},
		{`weave:///acme/app/table/abc`, ""},
		{`https://evil.example/`, ""},
	}
	refs := make([]string, len(tests))
	for i, tc := range tests {
		refs[i] = tc.ref
	}
	arg, _ := json.Marshal(refs)
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`import('/ui/js/json.js').then((m) => {
		const refs = %s;
		const view = m.jsonView(refs);
		window.linkResults = refs.map((r) => m.refLink(r));
		window.renderedLinks = [...view.querySelectorAll('a')].map((a) => ({ text: a.textContent, href: a.href, origin: a.origin }));
	})`, arg)))
	p.waitFor("window.renderedLinks !== undefined")
	got := eval[[]*string](p, "window.linkResults")
	for i, tc := range tests {
		link := ""
		if got[i] != nil {
			link = *got[i]
		}
		if link != tc.want {
			t.Errorf("refLink(%q) = %q, want %q", tc.ref, link, tc.want)
		}
	}
	// The UI's name rule is the server's.
	names := []string{"acme", "my-team_1", "v1.2", ".hidden", ".", "..", "a..b", "a b", "a\\b", "", "café", "a\x00", "*", "%2F"}
	arg, _ = json.Marshal(names)
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`import('/ui/js/paths.js').then((m) => { window.validNames = %s.map(m.validName); })`, arg)))
	p.waitFor("window.validNames !== undefined")
	for i, ok := range eval[[]bool](p, "window.validNames") {
		if want := auth.ValidName(names[i]); ok != want {
			t.Errorf("validName(%q) = %v in the UI, %v on the server", names[i], ok, want)
		}
	}
	origin := eval[string](p, "location.origin")
	for _, a := range eval[[]struct{ Text, Href, Origin string }](p, "window.renderedLinks") {
		if a.Origin != origin {
			t.Errorf("ref %q rendered as a link to %s, off this origin %s", a.Text, a.Href, origin)
		}
	}
}
