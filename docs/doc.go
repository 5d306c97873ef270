// Package docs holds Weft's documentation pages; its test keeps the
// architecture page true to the module's packages.
package docs
