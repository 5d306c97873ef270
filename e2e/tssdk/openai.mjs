// Drives weft's inference gateway with the official openai npm client, as
// an app would: base URL weft's /v1, a Weft key, the project option (sent
// as OpenAI-Project). Writes what it saw to WEFT_RESULT_FILE for
// openai_test.go to check. Errors are recorded, not thrown, so one failure
// does not hide the others.
import { writeFileSync } from 'node:fs';
import OpenAI from 'openai';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const model = env('WEFT_MODEL');
const client = new OpenAI({
  baseURL: env('WEFT_BASE_URL'),
  apiKey: env('WEFT_API_KEY'),
  project: env('WEFT_PROJECT'),
  maxRetries: 0,
});
const messages = (text) => [{ role: 'user', content: text }];
const result = { errors: {} };

async function plain(name, params) {
  const { data, response } = await client.chat.completions.create(params).withResponse();
  result[name] = { message: data.choices[0].message, finish: data.choices[0].finish_reason, usage: data.usage,
    callId: response.headers.get('x-weft-call-id') };
}

async function streamed(name, params) {
  const { data: stream, response } = await client.chat.completions.create({ ...params, stream: true }).withResponse();
  let content = '';
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    content += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  result[name] = { content, usage, chunks, callId: response.headers.get('x-weft-call-id') };
}

async function failing(name, run) {
  try {
    await run();
    result.errors[name] = { status: 0 };
  } catch (e) {
    result.errors[name] = { status: e.status ?? 0, code: e.code ?? null, kind: e.constructor.name, message: String(e.message) };
  }
}

result.models = (await client.models.list()).data.map((m) => ({ id: m.id, owned_by: m.owned_by, root: m.root }));
await plain('plain', { model, messages: messages('hello from node') });
await plain('tools', {
  model, messages: messages('weather in Bergen'), tool_choice: 'auto',
  tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { input: { type: 'string' } } } } }],
});
await plain('json', { model, messages: messages('as json'), response_format: { type: 'json_object' } });
await plain('failover', { model: env('WEFT_FAILOVER_MODEL'), messages: messages('first one down') });
await plain('slow', { model: env('WEFT_SLOW_MODEL'), messages: messages('take your time') });
await streamed('streamWithUsage', { model, messages: messages('count the words'), stream_options: { include_usage: true } });
await streamed('streamNoUsage', { model, messages: messages('count the words') });
await failing('unknownModel', () => client.chat.completions.create({ model: 'gpt-nope', messages: messages('hi') }));
await failing('badRequest', () => client.chat.completions.create({ model, messages: [] }));
await failing('upstreamError', () => client.chat.completions.create({ model: env('WEFT_BROKEN_MODEL'), messages: messages('hi') }));
await failing('midStream', async () => {
  const stream = await client.chat.completions.create({ model: env('WEFT_MIDSTREAM_MODEL'), messages: messages('hi'), stream: true });
  for await (const _ of stream) { /* drain until the error event */ }
});
await failing('wrongKey', () => new OpenAI({ baseURL: env('WEFT_BASE_URL'), apiKey: 'weft-wrong', maxRetries: 0 }).models.list());
// A project limited to one request a minute: the headers of the answer
// within it, then the 429 with its Retry-After.
const limited = new OpenAI({ baseURL: env('WEFT_BASE_URL'), apiKey: env('WEFT_API_KEY'), project: env('WEFT_LIMITED_PROJECT'), maxRetries: 0 });
{
  const { response } = await limited.chat.completions.create({ model, messages: messages('hi') }).withResponse();
  result.rateLimit = { limit: response.headers.get('x-ratelimit-limit-requests'), remaining: response.headers.get('x-ratelimit-remaining-requests') };
}
await failing('rateLimited', async () => {
  try {
    await limited.chat.completions.create({ model, messages: messages('hi') });
  } catch (e) {
    result.rateLimit.retryAfter = e.headers?.get('retry-after') ?? null;
    throw e;
  }
});

writeFileSync(env('WEFT_RESULT_FILE'), JSON.stringify(result));
