// Uses the Weave TypeScript SDK the way an application would, against the
// trace server named by WF_TRACE_SERVER_URL, then writes what it saw to
// WEFT_RESULT_FILE as JSON so tssdk_test.go can compare it with what the
// server stored. Every check that fails throws, which exits non-zero.
import { writeFileSync } from 'node:fs';
import * as weave from 'weave';

const project = process.env.WEFT_PROJECT;
const resultFile = process.env.WEFT_RESULT_FILE;
if (!project || !resultFile) {
  throw new Error('set WEFT_PROJECT (entity/project) and WEFT_RESULT_FILE');
}

// A 1x1 PNG: the image input the SDK uploads through /file/create.
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const ROWS = [
  { question: 'capital of France?', expected: 'Paris' },
  { question: '2+2?', expected: '4' },
  { question: 'color of the sky?', expected: 'blue' },
];

// canonical prints a value with sorted keys, to compare values whatever
// order their keys were built in.
function canonical(v) {
  if (Array.isArray(v)) {
    return `[${v.map(canonical).join(',')}]`;
  }
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map(k => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

function check(ok, what) {
  if (!ok) {
    throw new Error(`check failed: ${what}`);
  }
}

const client = await weave.init(project);

// Nested ops; the inner one throws and the parent recovers.
const add = weave.op(function add(a, b) {
  return a + b;
});
const explode = weave.op(function explode(x) {
  throw new Error(`kaboom: on purpose (${x})`);
});
const pipeline = weave.op(async function pipeline(x) {
  const sum = await add(x, 1);
  let caught = '';
  try {
    await explode(sum);
  } catch (e) {
    caught = e.message;
  }
  return { input: x, sum, caught };
});
// invoke also returns the call, which can be renamed once it has finished.
const [pipelineOut, pipelineCall] = await pipeline.invoke(3);
check(pipelineOut.sum === 4 && pipelineOut.caught.startsWith('kaboom'), 'pipeline output');

// A published plain object, read back.
const settings = { temperature: 0.2, model: 'fake-model', stop: ['\n'] };
// The SDK marks what it saves with a __savedRef, so it gets a copy.
const settingsRef = await client.publish(structuredClone(settings), 'settings');
const settingsBack = await settingsRef.get();
// Keys come back in the order they were published in.
check(JSON.stringify(settingsBack) === JSON.stringify(settings), `settings read back: ${JSON.stringify(settingsBack)}`);

// A dataset, saved and read back row by row.
const dataset = new weave.Dataset({ name: 'qa', description: 'three questions', rows: structuredClone(ROWS) });
const datasetRef = await dataset.save();
const datasetBack = await datasetRef.get();
const rowsBack = [];
for await (const row of datasetBack) {
  rowsBack.push({ question: row.question, expected: row.expected });
}
check(canonical(rowsBack) === canonical(ROWS), `dataset rows read back: ${JSON.stringify(rowsBack)}`);

// An image input.
const describeImage = weave.op(function describeImage(image) {
  return `an image of ${image.data.length} bytes`;
});
await describeImage(weave.weaveImage({ data: Buffer.from(PNG_BASE64, 'base64') }));

// A declarative evaluation over the dataset.
const fakeModel = weave.op(async function fakeModel({ datasetRow }) {
  return datasetRow.question === '2+2?' ? '4' : datasetRow.expected;
});
const exactMatch = weave.op(function exactMatch({ datasetRow, modelOutput }) {
  return modelOutput === datasetRow.expected;
});
const evaluation = new weave.Evaluation({ name: 'qa-eval', dataset, scorers: [exactMatch] });
const evalSummary = await evaluation.evaluate({ model: fakeModel });

// An imperative evaluation: logScore sends /feedback/create.
const logger = new weave.EvaluationLogger({ name: 'imperative-eval', model: { name: 'fake-model' }, scorers: ['correct'] });
const prediction = logger.logPrediction({ question: '2+2?' }, '4');
await prediction.logScore('correct', true);
await prediction.finish();
await logger.logSummary();

// Calls read back through the SDK, and a rename of a finished call.
await client.waitForBatchProcessing();
const allCalls = await client.getCalls();
const roots = await client.getCalls({ trace_roots_only: true });
const pipelineRoot = roots.find(c => c.op_name.includes('/op/pipeline:'));
check(pipelineRoot !== undefined, `a pipeline root among ${roots.map(c => c.op_name)}`);
const traceCalls = await client.getCalls({ trace_ids: [pipelineRoot.trace_id] });
check(traceCalls.length === 3, `3 calls in the pipeline trace, got ${traceCalls.length}`);
check(pipelineCall.id === pipelineRoot.id, 'the invoked call is the pipeline root');
await pipelineCall.setDisplayName('renamed pipeline');
const renamed = await client.getCall(pipelineRoot.id);
check(renamed.display_name === 'renamed pipeline' && renamed.output.sum === 4, `renamed root: ${renamed.display_name}`);

writeFileSync(
  resultFile,
  JSON.stringify({
    pngBase64: PNG_BASE64,
    settingsDigest: settingsRef.digest,
    datasetDigest: datasetRef.digest,
    rowsBack,
    evalSummary,
    callIds: allCalls.map(c => c.id),
    rootOps: roots.map(c => c.op_name),
    pipelineRootId: pipelineRoot.id,
  }),
);
