package wire

import (
	"encoding/json"

	"github.com/weftdev/weft/storage"
)

// ObjSchemaForInsert is the "obj" of /obj/create.
type ObjSchemaForInsert struct {
	ProjectID          string          `json:"project_id"`
	ObjectID           string          `json:"object_id"`
	Val                json.RawMessage `json:"val"`
	BuiltinObjectClass *string         `json:"builtin_object_class,omitempty"`
	// SetBaseObjectClass is the deprecated spelling of BuiltinObjectClass.
	SetBaseObjectClass *string `json:"set_base_object_class,omitempty"`
	ExpectedDigest     *string `json:"expected_digest,omitempty"`
	WBUserID           *string `json:"wb_user_id,omitempty"` // filled by the server
}

// Storage converts the object to its storage form.
func (o ObjSchemaForInsert) Storage() storage.ObjSchemaForInsert {
	return storage.ObjSchemaForInsert(o)
}

// ObjCreateRes answers /obj/create.
type ObjCreateRes struct {
	Digest   string `json:"digest"`
	ObjectID string `json:"object_id"`
}

// ObjSchema is one object version as /obj/read and /objs/query return it.
type ObjSchema struct {
	ProjectID       string          `json:"project_id"`
	ObjectID        string          `json:"object_id"`
	CreatedAt       Time            `json:"created_at"`
	DeletedAt       *Time           `json:"deleted_at"`
	Digest          string          `json:"digest"`
	VersionIndex    int64           `json:"version_index"`
	IsLatest        int             `json:"is_latest"`
	Kind            string          `json:"kind"`
	BaseObjectClass *string         `json:"base_object_class"`
	LeafObjectClass *string         `json:"leaf_object_class"`
	Val             json.RawMessage `json:"val"`
	WBUserID        *string         `json:"wb_user_id"`
	SizeBytes       *int64          `json:"size_bytes,omitempty"`
	// Tags and Aliases are nil unless include_tags_and_aliases was set.
	Tags    []string `json:"tags,omitzero"`
	Aliases []string `json:"aliases,omitzero"`
}

// NewObjSchema renders a stored object version.
func NewObjSchema(o storage.ObjSchema) ObjSchema {
	out := ObjSchema{ProjectID: o.ProjectID, ObjectID: o.ObjectID, CreatedAt: Time{o.CreatedAt},
		Digest: o.Digest, VersionIndex: o.VersionIndex, IsLatest: o.IsLatest, Kind: o.Kind,
		BaseObjectClass: o.BaseObjectClass, LeafObjectClass: o.LeafObjectClass, Val: o.Val,
		WBUserID: o.WBUserID, SizeBytes: o.SizeBytes, Tags: o.Tags, Aliases: o.Aliases}
	if o.DeletedAt != nil {
		out.DeletedAt = &Time{*o.DeletedAt}
	}
	return out
}

// ObjReadRes answers /obj/read.
type ObjReadRes struct {
	Obj ObjSchema `json:"obj"`
}

// ObjQueryRes answers /objs/query.
type ObjQueryRes struct {
	Objs []ObjSchema `json:"objs"`
}

// NewObjQueryRes renders stored object versions.
func NewObjQueryRes(res storage.ObjQueryRes) ObjQueryRes {
	out := ObjQueryRes{Objs: make([]ObjSchema, len(res.Objs))}
	for i, o := range res.Objs {
		out.Objs[i] = NewObjSchema(o)
	}
	return out
}

// ObjectVersionFilter narrows /objs/query. Empty lists filter nothing.
type ObjectVersionFilter struct {
	BaseObjectClasses        []string `json:"base_object_classes,omitempty"`
	ExcludeBaseObjectClasses []string `json:"exclude_base_object_classes,omitempty"`
	LeafObjectClasses        []string `json:"leaf_object_classes,omitempty"`
	ObjectIDs                []string `json:"object_ids,omitempty"`
	IsOp                     *bool    `json:"is_op,omitempty"`
	LatestOnly               bool     `json:"latest_only,omitempty"`
	Tags                     []string `json:"tags,omitempty"`
	Aliases                  []string `json:"aliases,omitempty"`
}

// Storage converts the filter to its storage form; nil stays nil.
func (f *ObjectVersionFilter) Storage() *storage.ObjectVersionFilter {
	if f == nil {
		return nil
	}
	s := storage.ObjectVersionFilter(*f)
	return &s
}

// DeletedObjVersion names one version /obj/delete removed.
type DeletedObjVersion struct {
	Digest          string  `json:"digest"`
	BaseObjectClass *string `json:"base_object_class"`
	LeafObjectClass *string `json:"leaf_object_class"`
}

// ObjDeleteRes answers /obj/delete.
type ObjDeleteRes struct {
	NumDeleted      int                 `json:"num_deleted"`
	DeletedVersions []DeletedObjVersion `json:"deleted_versions"`
}

// NewObjDeleteRes renders the outcome of a delete.
func NewObjDeleteRes(res storage.ObjDeleteRes) ObjDeleteRes {
	out := ObjDeleteRes{NumDeleted: res.NumDeleted}
	for _, v := range res.DeletedVersions {
		out.DeletedVersions = append(out.DeletedVersions, DeletedObjVersion(v))
	}
	return out
}
