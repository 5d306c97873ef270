// Package emoji finds the emoji in a string and names them the way the
// Weave reference server does for reaction feedback: CLDR short names as
// ":snake_case:" codes (":thumbs_up_light_skin_tone:"), flags by country
// (":United_States:"), and a skin-tone-free variant of each emoji.
//
// The table is the Unicode emoji test data (version 15.0) embedded in the
// binary rather than a third-party library: it is the same source the
// reference server's emoji library is generated from, it covers every
// emoji a reaction picker offers (a hand-picked "common" list would reject
// some), and it adds no dependency. Newer emoji than 15.0 are not emoji to
// this table.
//
// It must never import storage or HTTP code.
package emoji

import (
	"bufio"
	_ "embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

//go:embed emoji-test-15.0.txt
var testData string

// variationSelector (U+FE0F) asks for emoji presentation. Sequences match
// with or without it, as the minimally-qualified and unqualified forms of
// an emoji are the fully-qualified form without some of them.
const variationSelector = '\uFE0F'

// toneCode matches the skin tone parts of a code, as the reference server
// strips them to find the detoned emoji.
var toneCode = regexp.MustCompile(`_(light|medium-light|medium|medium-dark|dark)_skin_tone`)

// Table names emoji. It is immutable once built and safe for concurrent use.
type Table struct {
	codes    map[string]string // sequence without U+FE0F -> code
	emoji    map[string]string // code -> fully-qualified sequence
	starts   map[rune]bool     // first runes of sequences
	maxRunes int               // longest sequence, U+FE0F included
}

// New parses the embedded table.
func New() (*Table, error) {
	t := &Table{codes: map[string]string{}, emoji: map[string]string{}, starts: map[rune]bool{}}
	sc := bufio.NewScanner(strings.NewReader(testData))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		if err := t.add(line); err != nil {
			return nil, fmt.Errorf("emoji table line %d: %w", n, err)
		}
	}
	return t, sc.Err()
}

func (t *Table) add(line string) error {
	points, name, ok := strings.Cut(line, ";")
	if !ok || name == "" {
		return fmt.Errorf("want <code points>;<name>, got %q", line)
	}
	var seq []rune
	for _, hex := range strings.Fields(points) {
		r, err := strconv.ParseUint(hex, 16, 32)
		if err != nil {
			return fmt.Errorf("code point %q: %w", hex, err)
		}
		seq = append(seq, rune(r))
	}
	if len(seq) == 0 {
		return fmt.Errorf("no code points in %q", line)
	}
	code := CodeFor(name)
	t.codes[stripSelectors(seq)] = code
	t.emoji[code] = string(seq)
	t.starts[seq[0]] = true
	t.maxRunes = max(t.maxRunes, len(seq))
	return nil
}

// CodeFor turns a CLDR short name into its code: "flag: " is dropped,
// colons, commas and curly quotes are removed and spaces become "_".
func CodeFor(name string) string {
	name = strings.TrimPrefix(name, "flag: ")
	name = strings.NewReplacer(":", "", ",", "", "\u201c", "", "\u201d", "", " ", "_").Replace(name)
	return ":" + name + ":"
}

func stripSelectors(seq []rune) string {
	var b strings.Builder
	for _, r := range seq {
		if r != variationSelector {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Token is a run of s: an emoji (Code set) or other text (Code empty).
type Token struct {
	Text string
	Code string
}

// Tokens splits s into emoji and text, taking the longest emoji sequence
// at each position.
func (t *Table) Tokens(s string) []Token {
	runes := []rune(s)
	var out []Token
	text := 0 // start of the pending text run
	for i := 0; i < len(runes); {
		n, code := t.match(runes[i:])
		if n == 0 {
			i++
			continue
		}
		if text < i {
			out = append(out, Token{Text: string(runes[text:i])})
		}
		out = append(out, Token{Text: string(runes[i : i+n]), Code: code})
		i += n
		text = i
	}
	if text < len(runes) {
		out = append(out, Token{Text: string(runes[text:])})
	}
	return out
}

// match returns the length in runes and the code of the longest emoji at
// the start of runes, or 0.
func (t *Table) match(runes []rune) (int, string) {
	if !t.starts[runes[0]] {
		return 0, ""
	}
	for n := min(t.maxRunes, len(runes)); n > 0; n-- {
		if code, ok := t.codes[stripSelectors(runes[:n])]; ok {
			return n, code
		}
	}
	return 0, ""
}

// Count is the number of emoji in s.
func (t *Table) Count(s string) int {
	n := 0
	for _, tok := range t.Tokens(s) {
		if tok.Code != "" {
			n++
		}
	}
	return n
}

// Demojize replaces every emoji in s by its code.
func (t *Table) Demojize(s string) string {
	var b strings.Builder
	for _, tok := range t.Tokens(s) {
		if tok.Code != "" {
			b.WriteString(tok.Code)
		} else {
			b.WriteString(tok.Text)
		}
	}
	return b.String()
}

// Detone removes skin tones from the emoji in s: each emoji is replaced by
// the fully-qualified emoji whose code is its code without the tone parts.
// When no such emoji exists the toneless code itself is written, as the
// reference does.
func (t *Table) Detone(s string) string {
	var b strings.Builder
	for _, tok := range t.Tokens(s) {
		if tok.Code == "" {
			b.WriteString(tok.Text)
			continue
		}
		code := toneCode.ReplaceAllString(tok.Code, "")
		if e, ok := t.emoji[code]; ok {
			b.WriteString(e)
		} else {
			b.WriteString(code)
		}
	}
	return b.String()
}
