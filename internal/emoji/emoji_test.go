package emoji

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func newTable(t testing.TB) *Table {
	t.Helper()
	tb, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestNames(t *testing.T) {
	tb := newTable(t)
	cases := []struct {
		in, alias, detoned string
		count              int
	}{
		{"👍", ":thumbs_up:", "👍", 1},
		{"👍🏽", ":thumbs_up_medium_skin_tone:", "👍", 1},
		{"👍🏼", ":thumbs_up_medium-light_skin_tone:", "👍", 1},
		{"❤️", ":red_heart:", "❤️", 1},
		{"❤", ":red_heart:", "❤️", 1}, // unqualified form detones to the qualified one
		{"🇺🇸", ":United_States:", "🇺🇸", 1},
		{"#️⃣", ":keycap_#:", "#️⃣", 1},
		{"🈁", ":Japanese_here_button:", "🈁", 1},
		{"🦖", ":T-Rex:", "🦖", 1},
		{"🙅‍♂️", ":man_gesturing_NO:", "🙅‍♂️", 1},
		{"🧑🏻‍🤝‍🧑🏿", ":people_holding_hands_light_skin_tone_dark_skin_tone:", "🧑‍🤝‍🧑", 1},
		{"👨‍👩‍👧‍👦", ":family_man_woman_girl_boy:", "👨‍👩‍👧‍👦", 1},
		{"hi 👍!", "hi :thumbs_up:!", "hi 👍!", 1},
		{"👍👎", ":thumbs_up::thumbs_down:", "👍👎", 2},
		{"plain", "plain", "plain", 0},
		{"", "", "", 0},
		{"🏻", ":light_skin_tone:", "🏻", 1}, // the tone pattern needs a name before it
	}
	for _, c := range cases {
		if got := tb.Count(c.in); got != c.count {
			t.Errorf("Count(%q) = %d, want %d", c.in, got, c.count)
		}
		if got := tb.Demojize(c.in); got != c.alias {
			t.Errorf("Demojize(%q) = %q, want %q", c.in, got, c.alias)
		}
		if got := tb.Detone(c.in); got != c.detoned {
			t.Errorf("Detone(%q) = %q, want %q", c.in, got, c.detoned)
		}
	}
}

func TestCodeFor(t *testing.T) {
	cases := map[string]string{
		"thumbs up: light skin tone":                 ":thumbs_up_light_skin_tone:",
		"flag: United States":                        ":United_States:",
		"Japanese “here” button":                     ":Japanese_here_button:",
		"handshake: light skin tone, dark skin tone": ":handshake_light_skin_tone_dark_skin_tone:",
		"keycap: *":                        ":keycap_*:",
		"woman’s hat":                      ":woman’s_hat:",
		"man gesturing NO: dark skin tone": ":man_gesturing_NO_dark_skin_tone:",
	}
	for in, want := range cases {
		if got := CodeFor(in); got != want {
			t.Errorf("CodeFor(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTableCoversTheTestData(t *testing.T) {
	tb := newTable(t)
	lines := 0
	for _, l := range strings.Split(testData, "\n") {
		if l != "" && l[0] != '#' {
			lines++
		}
	}
	if lines < 3600 || len(tb.emoji) != lines {
		t.Fatalf("table has %d codes for %d lines; codes must be unique and cover Unicode 15.0", len(tb.emoji), lines)
	}
	// Every emoji must read back as exactly itself.
	for code, seq := range tb.emoji {
		if got := tb.Demojize(seq); got != code {
			t.Fatalf("Demojize(%q) = %q, want %q", seq, got, code)
		}
	}
}

func FuzzTokens(f *testing.F) {
	tb := newTable(f)
	for _, s := range []string{"👍🏽 ok", "🧑🏻‍🤝‍🧑🏿", "\ufe0f❤", "a#️⃣b", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var joined strings.Builder
		for _, tok := range tb.Tokens(s) {
			joined.WriteString(tok.Text)
		}
		// Tokens partition the input (invalid UTF-8 is read as U+FFFD).
		want := strings.ToValidUTF8(s, "\uFFFD")
		if utf8.ValidString(s) && joined.String() != want {
			t.Fatalf("tokens of %q join to %q", s, joined.String())
		}
		if n := tb.Count(s); n > utf8.RuneCountInString(s) {
			t.Fatalf("Count(%q) = %d exceeds the rune count", s, n)
		}
		_ = tb.Detone(s)
	})
}
