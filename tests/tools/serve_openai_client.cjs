// The official `openai` npm package against a running `serve`: models, chat (whole and
// streamed), completions, and an error. Usage: node serve_openai_client.cjs NODE_MODULES_PARENT PORT
// Prints one line per failure and exits 1; exits 0 when everything held.
const { createRequire } = require('module');
const path = require('path');
const [dir, port] = process.argv.slice(2);
const mod = createRequire(path.join(path.resolve(dir), 'package.json'))('openai');
const OpenAI = mod.OpenAI || mod.default || mod;

const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'test-key', maxRetries: 0 });
let failures = 0;
const check = (ok, what) => { if (!ok) { failures++; console.log('FAILED: ' + what); } };

(async () => {
  const models = await client.models.list();
  check(models.data.length === 1 && models.data[0].id === 'stories260K.gguf', 'models.list: ' + JSON.stringify(models.data));

  const messages = [{ role: 'user', content: 'Once upon a time' }];
  const whole = await client.chat.completions.create({ model: 'pocket', messages, max_tokens: 16, seed: 3, temperature: 0.8 });
  const text = whole.choices[0].message.content;
  check(typeof text === 'string' && text.length > 0, 'chat content: ' + JSON.stringify(whole));
  check(['stop', 'length'].includes(whole.choices[0].finish_reason), 'chat finish_reason');
  check(whole.usage.completion_tokens > 0 && whole.usage.total_tokens === whole.usage.prompt_tokens + whole.usage.completion_tokens, 'chat usage');

  const stream = await client.chat.completions.create({ model: 'pocket', messages, max_tokens: 16, seed: 3, temperature: 0.8,
                                                        stream: true, stream_options: { include_usage: true } });
  let streamed = '', usage = null, finish = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    if (chunk.choices.length && chunk.choices[0].delta.content) streamed += chunk.choices[0].delta.content;
    if (chunk.choices.length && chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
  }
  check(streamed === text, `streamed chat ${JSON.stringify(streamed)} != whole ${JSON.stringify(text)}`);
  check(finish === whole.choices[0].finish_reason, 'streamed finish_reason');
  check(usage && usage.completion_tokens === whole.usage.completion_tokens, 'streamed usage');

  const c = await client.completions.create({ model: 'pocket', prompt: 'Once upon a time', max_tokens: 12, temperature: 0 });
  check(c.choices[0].text.startsWith(', there was a little girl'), 'completion text: ' + JSON.stringify(c.choices[0].text));

  try {
    await client.chat.completions.create({ model: 'pocket', messages, temperature: 'hot' });
    check(false, 'a bad temperature was accepted');
  } catch (e) {
    check(e.status === 400, 'error status: ' + e.status);
    check(e.error && e.error.param === 'temperature', 'error param: ' + JSON.stringify(e.error));
  }
  process.exit(failures ? 1 : 0);
})().catch((e) => { console.log('FAILED: ' + (e.stack || e)); process.exit(1); });
