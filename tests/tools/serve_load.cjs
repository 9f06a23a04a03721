// A load generator for OpenAI-compatible servers (pocket's serve, llama-server): C clients at
// once, each streaming R completions of N tokens from a prompt of its own, and the figures
// the serve issue asks for: aggregate generated tokens per second over the whole run, and the
// time to first token (from sending a request to its first text) per request, median and 90th
// percentile. Every request sets ignore_eos, so each generates exactly N tokens on both servers.
// Usage: node serve_load.cjs PORT [--clients C] [--requests R] [--tokens N] [--prompt-words W] [--verbose]
// Prints one JSON line (with the distinct errors any stream reported, or an unfinished stream).
// Exits 1 if any request failed or came back short.
const args = process.argv.slice(2);
const port = args[0];
const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : def; };
const clients = opt('--clients', 16), requests = opt('--requests', 1), tokens = opt('--tokens', 64), words = opt('--prompt-words', 48);
const base = `http://127.0.0.1:${port}`;
const verbose = args.includes('--verbose');  // a line per request on stderr
let tStart = performance.now();
const vocabulary = ['little', 'cat', 'sun', 'river', 'happy', 'garden', 'friend', 'blue', 'tree', 'ball', 'mom', 'play', 'day', 'big', 'bird'];

function prompt(client, request) {
  // Distinct from its first words on, so no slot can reuse another client's cache.
  const w = [`Story ${client}-${request}:`];
  for (let i = 0; i < words; ++i) w.push(vocabulary[(client * 7 + request * 3 + i * (client + 2)) % vocabulary.length]);
  return w.join(' ');
}

async function one(client, request) {
  const t0 = performance.now();
  const r = await fetch(base + '/v1/completions', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ prompt: prompt(client, request), max_tokens: tokens, temperature: 0, ignore_eos: true,
                           stream: true, stream_options: { include_usage: true } }) });
  if (!r.ok) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  let ttft = null, chunks = 0, usage = null, buf = '', error = null, done = false;
  const dec = new TextDecoder();
  for await (const part of r.body) {
    buf += dec.decode(part, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const line = buf.slice(0, i).trim(); buf = buf.slice(i + 2);
      if (line === 'data: [DONE]') done = true;
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const ev = JSON.parse(line.slice(6));
      if (ev.error) error = ev.error.message || JSON.stringify(ev.error);
      if (ev.usage) usage = ev.usage;
      const text = ev.choices && ev.choices[0] && ev.choices[0].text;
      if (text) { ++chunks; if (ttft === null) ttft = performance.now() - t0; }
    }
  }
  const generated = usage && usage.completion_tokens ? usage.completion_tokens : chunks;
  if (!done && !error) error = 'the stream ended without data: [DONE]';
  if (verbose) console.error(JSON.stringify({ client, request, ttft_ms: ttft && +ttft.toFixed(1), end_ms: +(performance.now() - tStart).toFixed(1), generated, usage, error }));
  return { ttft, generated, error };
}

(async () => {
  const t0 = performance.now();
  tStart = t0;
  const results = await Promise.all(Array.from({ length: clients }, async (_, c) => {
    const out = [];
    for (let r = 0; r < requests; ++r) out.push(await one(c, r));
    return out;
  }));
  const wall = (performance.now() - t0) / 1000;
  const all = results.flat();
  const generated = all.reduce((a, r) => a + r.generated, 0);
  const ttfts = all.map((r) => r.ttft).filter((x) => x !== null).sort((a, b) => a - b);
  const pct = (p) => ttfts[Math.min(ttfts.length - 1, Math.floor(p * ttfts.length))];
  const short = all.filter((r) => r.generated !== tokens).length;
  const errors = [...new Set(all.map((r) => r.error).filter((e) => e))];
  console.log(JSON.stringify({ clients, requests: all.length, tokens_each: tokens, generated, wall_s: +wall.toFixed(3),
                               aggregate_tps: +(generated / wall).toFixed(2), ttft_median_ms: +pct(0.5).toFixed(1),
                               ttft_p90_ms: +pct(0.9).toFixed(1), short, errors }));
  process.exit(short ? 1 : 0);
})().catch((e) => { console.log(JSON.stringify({ error: String(e.stack || e) })); process.exit(1); });
