// Package tssdk tests weft with the real Weave TypeScript SDK: a Node
// script (script.mjs, weave pinned in package.json) traces ops, publishes
// objects and datasets, runs evaluations and logs feedback against an
// in-process weft, and the Go test checks from the server side that
// everything the script did was stored as the SDK meant it.
//
// The npm packages come from scripts/install-node-deps.sh; without them
// the test fails and says so.
package tssdk
