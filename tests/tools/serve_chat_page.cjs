// serve's chat page (GET /) in a real browser: Debian's chromium, headless, driven by
// puppeteer-core. Two messages at temperature 0: each answer must stream into the page and
// equal what the API answers for the same conversation. A third is cut short with the stop
// button: what the page kept must be the start of the full answer, and the server must go on
// answering. A reload must bring the conversation back from the browser's storage.
// Usage: node serve_chat_page.cjs NODE_MODULES_PARENT PORT CHROMIUM
// Prints one line per failure and exits 1; exits 0 when everything held.
const { createRequire } = require('module');
const path = require('path');
const [dir, port, chromium] = process.argv.slice(2);
const puppeteer = createRequire(path.join(path.resolve(dir), 'package.json'))('puppeteer-core');
const base = `http://127.0.0.1:${port}`;
let failures = 0;
const check = (ok, what) => { if (!ok) { failures++; console.log('FAILED: ' + what); } };

async function apiAnswer(messages, maxTokens) {
  const r = await fetch(base + '/v1/chat/completions', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ messages, temperature: 0, max_tokens: maxTokens }) });
  const j = await r.json();
  if (!r.ok) throw new Error('API: ' + JSON.stringify(j));
  return j.choices[0].message.content;
}

(async () => {
  const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
                                           args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(60000);
    await page.goto(base + '/');
    await page.evaluate(() => localStorage.clear());
    await page.reload();
    const setField = (sel, v) => page.$eval(sel, (el, v) => { el.value = v; el.dispatchEvent(new Event('change')); }, v);
    const lastAnswer = () => page.$$eval('.msg.assistant', (els) => (els.length ? els[els.length - 1].textContent : null));
    const idle = () => page.waitForFunction(() => !document.getElementById('send').disabled);
    // Counts the page's updates of the conversation, to see the answer arrive in pieces.
    await page.evaluate(() => {
      window.updates = 0;
      new MutationObserver(() => window.updates++).observe(document.getElementById('log'), { subtree: true, childList: true, characterData: true });
    });
    await setField('#temp', '0');
    await setField('#max', '24');

    const asked = [];
    for (const text of ['Once upon a time', 'What did the cat do?']) {
      await page.type('#input', text);
      const before = await page.evaluate(() => window.updates);
      await page.click('#send');  // the page disables send before its first await
      await idle();
      const shown = await lastAnswer();
      asked.push({ role: 'user', content: text });
      const expected = await apiAnswer(asked, 24);
      asked.push({ role: 'assistant', content: expected });
      check(shown && shown.length > 0, `no answer appeared for ${JSON.stringify(text)}`);
      check(shown === expected, `page shows ${JSON.stringify(shown)}, the API answers ${JSON.stringify(expected)}`);
      const errors = await page.$$eval('.msg.error', (els) => els.map((e) => e.textContent));
      check(errors.length === 0, 'the page shows errors: ' + JSON.stringify(errors));
      console.log(`observed: ${(await page.evaluate(() => window.updates)) - before} page updates for an answer of ${shown.length} characters`);
    }

    // Stop: a long answer, stopped as soon as its first words show.
    await setField('#max', '1500');
    await page.type('#input', 'Tell me a long story');
    await page.click('#send');
    await page.waitForFunction(() => { const a = document.querySelectorAll('.msg.assistant'); return a.length === 3 && a[2].textContent.length > 0; });
    await page.click('#stop');
    await idle();
    const partial = await lastAnswer();
    asked.push({ role: 'user', content: 'Tell me a long story' });
    const full = await apiAnswer(asked, 1500);
    check(partial.length > 0 && full.startsWith(partial), `the stopped answer ${JSON.stringify(partial.slice(0, 80))} is not the start of the full one`);
    console.log(`observed: stopped after ${partial.length} of ${full.length} characters`);

    // The conversation is kept in the browser: a reload shows the same six messages.
    const texts = () => page.$$eval('.msg', (els) => els.map((e) => e.className + ': ' + e.textContent));
    const kept = await texts();
    await page.reload();
    const again = await texts();
    check(kept.length === 6, `expected 6 messages, the page had ${kept.length}`);
    check(JSON.stringify(kept) === JSON.stringify(again), 'the conversation changed on reload: ' + JSON.stringify(again));
    check((await page.$eval('#max', (e) => e.value)) === '1500' && (await page.$eval('#temp', (e) => e.value)) === '0', 'settings not kept');
  } finally {
    await browser.close();
  }
  process.exit(failures ? 1 : 0);
})().catch((e) => { console.log('FAILED: ' + (e.stack || e)); process.exit(1); });
