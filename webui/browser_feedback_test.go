package webui_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftdev/weft/internal/browsertest"
)

// annotationSpecs publishes one annotation spec per input kind the UI
// renders and returns their refs by name.
func annotationSpecs(t *testing.T, w weft) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, schema := range map[string]map[string]any{
		"score":   {"type": "number", "minimum": 0, "maximum": 10},
		"correct": {"type": "boolean"},
		"tone":    {"type": "string", "enum": []string{"formal", "casual"}},
		"comment": {"type": "string", "maxLength": 200},
	} {
		var res struct{ Digest string }
		decode(t, w.post(t, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "acme/app", "object_id": name,
			"builtin_object_class": "AnnotationSpec", "val": map[string]any{"name": name, "description": "the " + name,
				"field_schema": schema}}}), &res)
		out[name] = "weave:///acme/app/object/" + name + ":" + res.Digest
	}
	return out
}

// feedbackOf is the feedback of a call as /feedback/query answers it.
func feedbackOf(t *testing.T, w weft, callID string) []map[string]any {
	t.Helper()
	var res struct{ Result []map[string]any }
	decode(t, w.post(t, "/feedback/query", map[string]any{"project_id": "acme/app",
		"query": map[string]any{"$expr": map[string]any{"$eq": []any{map[string]any{"$getField": "weave_ref"},
			map[string]any{"$literal": "weave:///acme/app/call/" + callID}}}}}), &res)
	return res.Result
}

// typesOf lists the feedback types of rows, with each row's payload
// value of key.
func typesOf(rows []map[string]any, key string) []string {
	var out []string
	for _, r := range rows {
		p, _ := r["payload"].(map[string]any)
		out = append(out, fmt.Sprintf("%v=%v", r["feedback_type"], p[key]))
	}
	slices.Sort(out)
	return out
}

// TestBrowserFeedback gives a call reactions, notes and annotations in the
// trace view, removes the caller's own, then works an annotation queue.
func TestBrowserFeedback(t *testing.T) {
	w := startWeft(t)
	ingestWeave(t, w, time.Now())
	specs := annotationSpecs(t, w)
	p := page{t: t, ctx: browsertest.New(t, 90*time.Second), url: w.url, dir: browsertest.ArtifactsDir(t)}
	p.open("/acme/app/calls/root-3")
	p.waitFor("!!document.querySelector('#apikey')")
	p.do(chromedp.SendKeys(chromedp.CSS("#apikey"), w.key), chromedp.Click(chromedp.CSS("form.signin button")))
	p.waitFor("document.querySelector('.feedback-body')?.dataset.loaded === 'true'")
	checkNames(t, p)

	t.Run("reactions and notes", func(t *testing.T) {
		p.t = t
		p.do(chromedp.Click(chromedp.CSS(`button.react[data-emoji="👍"]`)))
		p.waitFor("document.querySelectorAll('ul.feedback li').length === 1")
		p.do(chromedp.SendKeys(chromedp.CSS("#note"), "too slow"), chromedp.Click(chromedp.CSS("form.note-form button")))
		p.waitFor("document.querySelectorAll('ul.feedback li').length === 2")
		if got := p.texts("ul.feedback li .what"); !slices.Equal(got, []string{"👍", "too slow"}) {
			t.Errorf("feedback shown = %v, want the reaction then the note", got)
		}
		rows := feedbackOf(t, w, "root-3")
		if got := typesOf(rows, "emoji"); len(got) != 2 || got[1] != "wandb.reaction.1=👍" {
			t.Errorf("stored = %v, want the reaction", got)
		}
		if got := typesOf(rows, "note"); got[0] != "wandb.note.1=too slow" {
			t.Errorf("stored = %v, want the note", got)
		}
		p.shot("feedback")
		p.do(chromedp.Click(chromedp.CSS(`ul.feedback li[data-type="wandb.reaction.1"] button.remove`)))
		p.waitFor("document.querySelectorAll('ul.feedback li').length === 1")
		p.do(chromedp.Click(chromedp.CSS(`ul.feedback li[data-type="wandb.note.1"] button.remove`)))
		p.waitFor("document.querySelectorAll('ul.feedback li').length === 0")
		if rows := feedbackOf(t, w, "root-3"); len(rows) != 0 {
			t.Errorf("after removing both, stored = %v", rows)
		}
	})

	t.Run("the caller's own feedback can be removed", func(t *testing.T) {
		p.t = t
		p.open("/acme/app/calls/child-llm")
		p.waitFor("document.querySelector('.feedback-body')?.dataset.loaded === 'true' && document.querySelectorAll('ul.feedback li').length === 1")
		// The note of ingestWeave is ada's own: the key's user.
		if n := eval[int](p, "document.querySelectorAll('ul.feedback li button.remove').length"); n != 1 {
			t.Errorf("own note has %d remove buttons, want 1", n)
		}
	})

	t.Run("annotation specs of each type", func(t *testing.T) {
		p.t = t
		p.open("/acme/app/calls/root-1")
		p.waitFor("document.querySelectorAll('form.annotations [data-spec]').length === 4")
		p.do(chromedp.SendKeys(chromedp.CSS("#ann-score"), "7.5"), chromedp.SetValue(chromedp.CSS("#ann-correct"), "true"),
			chromedp.SetValue(chromedp.CSS("#ann-tone"), "1"), chromedp.SendKeys(chromedp.CSS("#ann-comment"), "clear"),
			chromedp.Click(chromedp.CSS("form.annotations button[type=submit]")))
		p.waitFor("document.querySelectorAll('ul.feedback li').length === 4")
		p.shot("annotations")
		rows := feedbackOf(t, w, "root-1")
		got := typesOf(rows, "value")
		want := []string{"wandb.annotation.comment=clear", "wandb.annotation.correct=true", "wandb.annotation.score=7.5", "wandb.annotation.tone=casual"}
		if !slices.Equal(got, want) {
			t.Errorf("annotations stored = %v, want %v", got, want)
		}
		for _, r := range rows {
			name := r["feedback_type"].(string)[len("wandb.annotation."):]
			if r["annotation_ref"] != specs[name] {
				t.Errorf("%s annotation_ref = %v, want %s", name, r["annotation_ref"], specs[name])
			}
		}
		// Out of range: the browser refuses it and nothing is saved.
		p.do(chromedp.SetValue(chromedp.CSS("#ann-score"), "99"), chromedp.Click(chromedp.CSS("form.annotations button[type=submit]")))
		p.waitFor("document.querySelector('.feedback-body [role=status]').textContent.startsWith('Enter a valid value')")
		if n := len(feedbackOf(t, w, "root-1")); n != 4 {
			t.Errorf("after an out-of-range score, %d rows, want 4", n)
		}
	})

	t.Run("queue: complete one item, skip one", func(t *testing.T) {
		p.t = t
		var q struct{ ID string }
		decode(t, w.post(t, "/annotation_queues", map[string]any{"project_id": "acme/app", "name": "review",
			"description": "answers to check", "scorer_refs": []string{specs["score"], specs["tone"]}}), &q)
		w.post(t, "/annotation_queues/"+q.ID+"/items", map[string]any{"project_id": "acme/app",
			"call_ids": []string{"root-1", "root-2"}, "display_fields": []string{"inputs.question", "exception"}})
		p.open("/acme/app/queues")
		p.waitFor("document.querySelectorAll('ul.queues li').length === 1")
		p.do(chromedp.Click(chromedp.CSS("ul.queues a")))
		p.waitFor("document.querySelector('.queue-item h2')?.textContent.startsWith('Item 1 of 2')")
		checkNames(t, p)
		if dd := p.texts(".display-fields dd"); len(dd) != 2 || dd[0] != `"What is the capital of France?"` {
			t.Errorf("display fields = %v, want the question", dd)
		}
		p.do(chromedp.SendKeys(chromedp.CSS("#q-score"), "3"), chromedp.SetValue(chromedp.CSS("#q-tone"), "0"))
		p.shot("queue")
		p.do(chromedp.Click(chromedp.CSS(".queue-item button[type=submit]")))
		p.waitFor("document.querySelector('.queue-item h2')?.textContent.startsWith('Item 2 of 2')")
		if dd := p.texts(".display-fields dd"); len(dd) != 2 || dd[1] != `"TimeoutError: model too slow"` {
			t.Errorf("display fields = %v, want the exception", dd)
		}
		p.do(chromedp.Click(chromedp.CSS(".queue-item button.skip-item")))
		p.waitFor("!!document.querySelector('.queue-item .done')")

		var stats struct {
			Stats []struct {
				QueueID        string `json:"queue_id"`
				TotalItems     int    `json:"total_items"`
				CompletedItems int    `json:"completed_items"`
			}
		}
		decode(t, w.post(t, "/annotation_queues/stats", map[string]any{"project_id": "acme/app", "queue_ids": []string{q.ID}}), &stats)
		if len(stats.Stats) != 1 || stats.Stats[0].TotalItems != 2 || stats.Stats[0].CompletedItems != 2 {
			t.Errorf("stats = %+v, want 2 items, both done", stats.Stats)
		}
		var items struct{ Items []map[string]any }
		decode(t, w.post(t, "/annotation_queues/"+q.ID+"/items/query", map[string]any{"project_id": "acme/app"}), &items)
		states := map[string]any{}
		for _, it := range items.Items {
			states[it["call_id"].(string)] = it["annotation_state"]
		}
		if states["root-1"] != "completed" || states["root-2"] != "skipped" {
			t.Errorf("item states = %v, want root-1 completed, root-2 skipped", states)
		}
		var queued []string
		for _, r := range feedbackOf(t, w, "root-1") {
			if r["queue_id"] == q.ID {
				p, _ := r["payload"].(map[string]any)
				queued = append(queued, fmt.Sprintf("%v=%v", r["feedback_type"], p["value"]))
			}
		}
		slices.Sort(queued)
		if !slices.Equal(queued, []string{"wandb.annotation.score=3", "wandb.annotation.tone=formal"}) {
			t.Errorf("annotations saved from the queue = %v", queued)
		}
		if rows := feedbackOf(t, w, "root-2"); len(rows) != 0 {
			raw, _ := json.Marshal(rows)
			t.Errorf("the skipped item got feedback: %s", raw)
		}
	})
}
