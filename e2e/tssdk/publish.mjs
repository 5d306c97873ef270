// Publishes one object with the Weave TypeScript SDK, as a training
// script would publish a model's description, and writes its digest to
// WEFT_RESULT_FILE; automation_test.go then aliases it and checks the
// webhook delivery.
import { writeFileSync } from 'node:fs';
import * as weave from 'weave';

const project = process.env.WEFT_PROJECT;
const resultFile = process.env.WEFT_RESULT_FILE;
if (!project || !resultFile) {
  throw new Error('set WEFT_PROJECT (entity/project) and WEFT_RESULT_FILE');
}

const client = await weave.init(project);
const model = { framework: 'onnx', epochs: 12, note: 'say "hi" </b>', layers: [64, 32] };
const ref = await client.publish(structuredClone(model), 'classifier');
writeFileSync(resultFile, JSON.stringify({ digest: ref.digest }));
