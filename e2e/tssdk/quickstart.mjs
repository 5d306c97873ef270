// The Weave TypeScript quick start as a new user runs it: only
// WANDB_BASE_URL (https, the SDK's only choice for it) and WANDB_API_KEY
// are set, and weave.init names no entity, so the SDK asks
// <host>/graphql for the default entity and sends traces to
// <host>/traces. Every request the SDK makes is recorded (by wrapping the
// global fetch it calls) and written, with what the script saw, to
// WEFT_RESULT_FILE for quickstart_test.go.
import { writeFileSync } from 'node:fs';
import * as weave from 'weave';

const resultFile = process.env.WEFT_RESULT_FILE;
if (!resultFile || !process.env.WANDB_BASE_URL) {
  throw new Error('set WANDB_BASE_URL and WEFT_RESULT_FILE');
}

// requests lists, in the order they were sent, each request's method and
// URL, the call ids a batch starts and the call id an update renames.
const requests = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init = {}) => {
  const url = typeof input === 'string' ? input : input.url;
  const entry = { method: init.method ?? 'GET', url, starts: [], renames: '' };
  if (typeof init.body === 'string' && url.endsWith('/call/upsert_batch')) {
    entry.starts = JSON.parse(init.body).batch.filter(i => i.mode === 'start').map(i => i.req.start.id);
  }
  if (typeof init.body === 'string' && url.endsWith('/call/update')) {
    entry.renames = JSON.parse(init.body).call_id;
  }
  requests.push(entry);
  return realFetch(input, init);
};

function check(ok, what) {
  if (!ok) {
    throw new Error(`check failed: ${what}`);
  }
}

const client = await weave.init('quickstart');

// Nested ops.
const shout = weave.op(function shout(text) {
  return text.toUpperCase();
});
const greet = weave.op(async function greet(name) {
  return `${await shout('hello')}, ${name}`;
});
check((await greet('ada')) === 'HELLO, ada', 'greet output');

// A published object reads back with its keys in the order they were sent.
const settings = { temperature: 0.2, model: 'fake-model', tags: ['b', 'a'] };
const settingsRef = await client.publish(structuredClone(settings), 'settings');
const settingsBack = await settingsRef.get();
check(JSON.stringify(settingsBack) === JSON.stringify(settings), `settings read back: ${JSON.stringify(settingsBack)}`);

// A rename right after a call: the call's start and end wait in the SDK's
// 200 ms batch, so the rename reaches the server first.
await client.waitForBatchProcessing();
const [, renamedCall] = await greet.invoke('grace');
await renamedCall.setDisplayName('renamed right after start');
await client.waitForBatchProcessing();
const renamed = await client.getCall(renamedCall.id);
check(renamed.display_name === 'renamed right after start', `display name read back: ${renamed.display_name}`);

writeFileSync(
  resultFile,
  JSON.stringify({
    projectId: client.projectId,
    renamedCallId: renamedCall.id,
    settingsDigest: settingsRef.digest,
    requests,
  }),
);
