package otelmap

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOpName(t *testing.T) {
	long := strings.Repeat("segment/", 20) + "end" // 163 chars
	tests := []struct {
		name, in, want string
	}{
		{"plain", "chat gpt-4", "chat gpt-4"},
		{"empty", "", unnamedOp},
		{"blank", "  ", unnamedOp},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
		{"exactly the limit", strings.Repeat("a", MaxOpNameLen), strings.Repeat("a", MaxOpNameLen)},
		// 123 chars of room before ":" + 4 hex digits; the cut falls back
		// to the last "/" inside them.
		{"long, cut at a delimiter", long, strings.Repeat("segment/", 14) + "segment:" + hash4(long)},
		{"long, no delimiter", strings.Repeat("b", 200), strings.Repeat("b", 123) + ":" + hash4(strings.Repeat("b", 200))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := OpName(tc.in)
			if utf8.RuneCountInString(got) > MaxOpNameLen {
				t.Errorf("OpName is %d chars, over the limit", utf8.RuneCountInString(got))
			}
			if tc.want != "" && got != tc.want {
				t.Errorf("OpName(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	if OpName(long+"x") == OpName(long+"y") {
		t.Error("long names that differ only at the end must stay distinct")
	}
}

func hash4(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:4]
}

func TestDisplayName(t *testing.T) {
	if got := DisplayName("short"); got != "short" {
		t.Errorf("DisplayName = %q", got)
	}
	long := strings.Repeat("word ", 300)
	got := DisplayName(long)
	if n := utf8.RuneCountInString(got); n > MaxDisplayNameLen || !strings.HasSuffix(got, " ...") {
		t.Errorf("DisplayName is %d chars ending %q", n, got[len(got)-8:])
	}
	cjk := strings.Repeat("字", MaxDisplayNameLen) // 3 bytes each, still within the limit
	if DisplayName(cjk) != cjk {
		t.Error("the limit counts characters, not bytes")
	}
}
