// Package tssdk tests weft with the real Weave TypeScript SDK: a Node
// script (script.mjs, weave pinned in package.json) traces ops, publishes
// objects and datasets, runs evaluations and logs feedback against an
// in-process weft, and the Go test checks from the server side that
// everything the script did was stored as the SDK meant it. A second
// script (openai.mjs, the openai package pinned the same way) drives the
// inference gateway as an app using the official OpenAI client would.
//
// The npm packages come from scripts/install-node-deps.sh; without them
// the test fails and says so.
package tssdk
