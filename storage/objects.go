package storage

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/weftdev/weft/refs"
)

// Object kinds as stored and returned in ObjSchema.kind.
const (
	KindObject = "object"
	KindOp     = "op"
)

// Limits of the objects API, as the reference server enforces them.
const (
	MaxObjectIDLen      = 128
	MaxTagLen           = 256
	MaxAliasLen         = 128
	MaxDeleteDigests    = 100
	MaxRefsPerReadBatch = 1000
)

// ObjSchemaForInsert is an object version to create (wire.ObjSchemaForInsert).
type ObjSchemaForInsert struct {
	ProjectID          string
	ObjectID           string
	Val                json.RawMessage
	BuiltinObjectClass *string
	// SetBaseObjectClass is the deprecated spelling of BuiltinObjectClass.
	SetBaseObjectClass *string
	ExpectedDigest     *string
	WBUserID           *string // filled by the server
}

// ObjCreateReq asks to create an object version.
type ObjCreateReq struct {
	Obj ObjSchemaForInsert
}

// ObjCreateRes is the created version.
type ObjCreateRes struct {
	Digest   string
	ObjectID string
}

// ObjSchema is one stored object version.
type ObjSchema struct {
	ProjectID       string
	ObjectID        string
	CreatedAt       time.Time
	DeletedAt       *time.Time
	Digest          string
	VersionIndex    int64
	IsLatest        int
	Kind            string
	BaseObjectClass *string
	LeafObjectClass *string
	Val             json.RawMessage
	WBUserID        *string
	SizeBytes       *int64
	// Tags and Aliases are nil unless include_tags_and_aliases was set.
	Tags    []string
	Aliases []string
}

// ObjReadReq asks for one object version. Digest is a content digest,
// "latest", "v<N>" or an alias name.
type ObjReadReq struct {
	ProjectID             string
	ObjectID              string
	Digest                string
	MetadataOnly          bool
	IncludeTagsAndAliases bool
}

// ObjReadRes is the version a read found.
type ObjReadRes struct {
	Obj ObjSchema
}

// ObjectVersionFilter narrows an object query. Empty lists filter nothing.
type ObjectVersionFilter struct {
	BaseObjectClasses        []string
	ExcludeBaseObjectClasses []string
	LeafObjectClasses        []string
	ObjectIDs                []string
	IsOp                     *bool
	LatestOnly               bool
	Tags                     []string
	Aliases                  []string
}

// ObjQueryReq lists object versions. Only object_id and created_at
// sort terms are honoured; others are ignored, as in the reference.
type ObjQueryReq struct {
	ProjectID             string
	Filter                *ObjectVersionFilter
	Limit                 *int64
	Offset                *int64
	SortBy                []SortBy
	MetadataOnly          bool
	IncludeStorageSize    bool
	IncludeTagsAndAliases bool
}

// ObjQueryRes is the versions a query found.
type ObjQueryRes struct {
	Objs []ObjSchema
}

// ObjDeleteReq deletes versions of an object. Empty Digests deletes every
// version; entries may be content digests, "latest" or "v<N>".
type ObjDeleteReq struct {
	ProjectID string
	ObjectID  string
	Digests   []string
}

// DeletedObjVersion names one version a delete removed.
type DeletedObjVersion struct {
	Digest          string
	BaseObjectClass *string
	LeafObjectClass *string
}

// ObjDeleteRes is what a delete removed.
type ObjDeleteRes struct {
	NumDeleted      int
	DeletedVersions []DeletedObjVersion
}

// ObjTagsReq adds or removes tags of one version. ObjectID and Digest come
// from the URL path on the wire.
type ObjTagsReq struct {
	ProjectID string
	ObjectID  string
	Digest    string
	Tags      []string
}

// ObjAliasesReq points aliases at a version (Digest set) or removes them
// (Digest ignored). ObjectID comes from the URL path on the wire.
type ObjAliasesReq struct {
	ProjectID string
	ObjectID  string
	Digest    string
	Aliases   []string
}

// ObjectDeletedError is returned when a read addresses a deleted version.
// It is an ErrNotFound; the HTTP layer adds DeletedAt to the 404 body so
// clients stop retrying.
type ObjectDeletedError struct {
	ObjectID     string
	VersionIndex int64
	DeletedAt    time.Time
}

func (e *ObjectDeletedError) Error() string {
	return fmt.Sprintf("%s:v%d was deleted at %s", e.ObjectID, e.VersionIndex, pyDatetime(e.DeletedAt))
}

// Unwrap makes errors.Is(err, ErrNotFound) hold.
func (e *ObjectDeletedError) Unwrap() error { return ErrNotFound }

// pyDatetime prints t as Python's str(datetime) of an aware UTC value.
func pyDatetime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02 15:04:05+00:00")
	}
	return t.Format("2006-01-02 15:04:05.000000+00:00")
}

// ObjectStore versions objects (values and ops) per project. Every request
// names its project and no method reads or writes another project's rows.
// Bad input errors wrap ErrInvalidArgument, ErrFieldNotAllowed (invalid
// object_id) or ErrConflict (expected_digest mismatch).
type ObjectStore interface {
	// CreateObject stores a version (idempotent by digest) and makes it
	// the latest.
	CreateObject(ctx context.Context, req ObjCreateReq) (ObjCreateRes, error)
	// ReadObject resolves Digest and returns that version; ErrNotFound
	// when absent, *ObjectDeletedError when deleted.
	ReadObject(ctx context.Context, req ObjReadReq) (ObjReadRes, error)
	// QueryObjects lists live versions.
	QueryObjects(ctx context.Context, req ObjQueryReq) (ObjQueryRes, error)
	// DeleteObjects soft-deletes versions with their tags and aliases.
	DeleteObjects(ctx context.Context, req ObjDeleteReq) (ObjDeleteRes, error)
	AddObjectTags(ctx context.Context, req ObjTagsReq) error
	RemoveObjectTags(ctx context.Context, req ObjTagsReq) error
	SetObjectAliases(ctx context.Context, req ObjAliasesReq) error
	RemoveObjectAliases(ctx context.Context, req ObjAliasesReq) error
	// ListTags and ListAliases return the project's distinct names, sorted.
	ListTags(ctx context.Context, projectID string) ([]string, error)
	ListAliases(ctx context.Context, projectID string) ([]string, error)
	// ReadRefs resolves refs (wire form) to values, walking extra paths
	// through objects and table rows. Missing, deleted or unreadable
	// targets (canRead false for their project) give null; latest or alias
	// versions, table, call and artifact refs, and more than
	// MaxRefsPerReadBatch refs give ErrInvalidArgument.
	ReadRefs(ctx context.Context, canRead func(projectID string) bool, refs []string) ([]json.RawMessage, error)
}

// ValidateObjectID applies the reference's object name rule: 1 to 128
// word characters (any script), '.', '_' or '-'. Violations wrap
// ErrFieldNotAllowed (HTTP 422), as the reference answers.
func ValidateObjectID(id string) error {
	var bad []string
	for _, r := range id {
		if !wordRune(r) && r != '.' && r != '-' && !slices.Contains(bad, string(r)) {
			bad = append(bad, string(r))
		}
	}
	switch {
	case id == "":
		return fmt.Errorf("object_id is empty; name the object: %w", ErrFieldNotAllowed)
	case len(bad) > 0:
		return fmt.Errorf("object_id %q has invalid characters %q; use letters, digits, '.', '_' or '-': %w", id, bad, ErrFieldNotAllowed)
	case utf8.RuneCountInString(id) > MaxObjectIDLen:
		return fmt.Errorf("object_id is longer than %d characters; shorten it: %w", MaxObjectIDLen, ErrFieldNotAllowed)
	}
	return nil
}

// wordRune is Python's \w for str patterns.
func wordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// ValidateTagName: 1 to 256 characters, words of letters, digits, '_' or
// '-' separated by single spaces.
func ValidateTagName(tag string) error {
	ok := tag != "" && utf8.RuneCountInString(tag) <= MaxTagLen
	for _, word := range strings.Split(tag, " ") {
		ok = ok && word != "" && strings.IndexFunc(word, func(r rune) bool { return !wordRune(r) && r != '-' }) < 0
	}
	if !ok {
		return fmt.Errorf("tag %q is invalid: use 1 to %d letters, digits, '_' or '-', single spaces between words: %w",
			tag, MaxTagLen, ErrInvalidArgument)
	}
	return nil
}

// ValidateAliasName: 1 to 128 characters, not only whitespace, no '/' or
// ':', and not "latest" or v<N>, which name versions already.
func ValidateAliasName(alias string) error {
	var why string
	switch {
	case strings.TrimFunc(alias, unicode.IsSpace) == "":
		why = "it must not be empty or whitespace"
	case utf8.RuneCountInString(alias) > MaxAliasLen:
		why = fmt.Sprintf("it must be at most %d characters", MaxAliasLen)
	case strings.ContainsAny(alias, "/:"):
		why = "it must not contain '/' or ':'"
	case alias == "latest" || isVersionPattern(alias):
		why = "latest and v<number> are reserved for versions"
	default:
		return nil
	}
	return fmt.Errorf("alias %q is invalid: %s: %w", alias, why, ErrInvalidArgument)
}

func isVersionPattern(s string) bool {
	rest, ok := strings.CutPrefix(s, "v")
	return ok && rest != "" && strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
}

// VersionIndex parses a "v<N>" selector as the reference does (Python
// int() of what follows the v).
func VersionIndex(selector string) (int64, bool) {
	rest, ok := strings.CutPrefix(selector, "v")
	if !ok {
		return 0, false
	}
	return refs.ParseIndex(rest)
}

// IsContentDigest reports whether s looks like a content hash: 43
// alphanumeric characters (object, row, file digests) or 64 hex digits
// (table digests). Anything else may name an alias.
func IsContentDigest(s string) bool {
	if utf8.RuneCountInString(s) == 43 {
		return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) < 0
	}
	if len(s) == 64 {
		_, err := hex.DecodeString(s)
		return err == nil
	}
	return false
}
