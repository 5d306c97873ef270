package storage

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNameRules(t *testing.T) {
	tests := []struct {
		name  string
		check func(string) error
		in    string
		want  error // nil: valid
	}{
		{"object id", ValidateObjectID, "my-obj_1.v2", nil},
		{"object id unicode", ValidateObjectID, "données²", nil},
		{"object id space", ValidateObjectID, "a b", ErrFieldNotAllowed},
		{"object id slash", ValidateObjectID, "a/b", ErrFieldNotAllowed},
		{"object id empty", ValidateObjectID, "", ErrFieldNotAllowed},
		{"object id 128", ValidateObjectID, strings.Repeat("é", 128), nil},
		{"object id 129", ValidateObjectID, strings.Repeat("é", 129), ErrFieldNotAllowed},
		{"tag", ValidateTagName, "needs-review 2", nil},
		{"tag double space", ValidateTagName, "a  b", ErrInvalidArgument},
		{"tag edge space", ValidateTagName, "a ", ErrInvalidArgument},
		{"tag punctuation", ValidateTagName, "a!", ErrInvalidArgument},
		{"tag 256", ValidateTagName, strings.Repeat("t", 256), nil},
		{"tag 257", ValidateTagName, strings.Repeat("t", 257), ErrInvalidArgument},
		{"alias", ValidateAliasName, "release candidate!", nil},
		{"alias v-prefix word", ValidateAliasName, "v2-beta", nil},
		{"alias version", ValidateAliasName, "v2", ErrInvalidArgument},
		{"alias latest", ValidateAliasName, "latest", ErrInvalidArgument},
		{"alias colon", ValidateAliasName, "a:b", ErrInvalidArgument},
		{"alias blank", ValidateAliasName, " \t", ErrInvalidArgument},
		{"alias 129", ValidateAliasName, strings.Repeat("a", 129), ErrInvalidArgument},
	}
	for _, tt := range tests {
		err := tt.check(tt.in)
		if (tt.want == nil && err != nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%s %q: err = %v, want %v", tt.name, tt.in, err, tt.want)
		}
	}
}

func TestSelectors(t *testing.T) {
	versions := map[string]int64{"v0": 0, "v12": 12, "v+3": 3, "v1_0": 10}
	for sel, want := range versions {
		if n, ok := VersionIndex(sel); !ok || n != want {
			t.Errorf("VersionIndex(%q) = %d, %v; want %d", sel, n, ok, want)
		}
	}
	for _, sel := range []string{"latest", "v", "vx", "1", "prod"} {
		if _, ok := VersionIndex(sel); ok {
			t.Errorf("VersionIndex(%q) accepted", sel)
		}
	}
	hashes := map[string]bool{
		"L6FDDACYKqV8VIILzjVobLzmqehhCT0XcEfAE4lykYc":                      true,
		"404fb12bd4ead65170701df6a54dfa6be5525fed88033c93f9347cd2f1b4df46": true,
		"L6FDDACYKqV8VIILzjVobLzmqehhCT0XcEfAE4lykY":                       false,
		"L6FDDACYKqV8VIILzjVobLzmqehhCT0XcEfAE4lyk-c":                      false,
		"zzzfb12bd4ead65170701df6a54dfa6be5525fed88033c93f9347cd2f1b4df46": false,
		"production": false,
	}
	for s, want := range hashes {
		if got := IsContentDigest(s); got != want {
			t.Errorf("IsContentDigest(%q) = %v", s, got)
		}
	}
}

func TestObjectDeletedError(t *testing.T) {
	tests := []struct {
		at   time.Time
		want string
	}{
		{time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC), "m:v3 was deleted at 2025-01-02 03:04:05.123456+00:00"},
		{time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), "m:v3 was deleted at 2025-01-02 03:04:05+00:00"},
	}
	for _, tt := range tests {
		err := error(&ObjectDeletedError{ObjectID: "m", VersionIndex: 3, DeletedAt: tt.at})
		if err.Error() != tt.want || !errors.Is(err, ErrNotFound) {
			t.Errorf("error = %q (not found: %v), want %q", err, errors.Is(err, ErrNotFound), tt.want)
		}
	}
}

func TestTableRequestRules(t *testing.T) {
	for field, ok := range map[string]bool{"a": true, "a.b.0": true, "": false, " ": false, ".a": false, "a.": false, "a..b": false, "a. .b": false} {
		if _, err := TableSortPath(field); (err == nil) != ok || (err != nil && !errors.Is(err, ErrInvalidArgument)) {
			t.Errorf("TableSortPath(%q) err = %v", field, err)
		}
	}
	i := func(v int64) *int64 { return &v }
	tests := []struct {
		limit, offset *int64
		wantL, wantO  int64
		wantErr       bool
	}{
		{nil, nil, -1, 0, false},
		{i(5), i(2), 5, 2, false},
		{i(-3), nil, -1, 0, false},
		{i(0), nil, 0, 0, false},
		{nil, i(-1), 0, 0, true},
	}
	for _, tt := range tests {
		l, o, err := PageBounds(tt.limit, tt.offset)
		if l != tt.wantL || o != tt.wantO || (err != nil) != tt.wantErr {
			t.Errorf("PageBounds = %d, %d, %v", l, o, err)
		}
	}
	exp := "abc"
	if err := CheckExpectedDigest("t", &exp, "abd"); !errors.Is(err, ErrConflict) {
		t.Errorf("mismatch err = %v", err)
	}
	if CheckExpectedDigest("t", &exp, "abc") != nil || CheckExpectedDigest("t", nil, "x") != nil {
		t.Error("matching or absent expected_digest refused")
	}
}
