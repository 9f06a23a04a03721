#include "chat_page.hpp"

namespace pocket::serve {

const std::string& chat_page_html() {
    static const std::string page = R"PAGE(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>pocket</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;display:flex;flex-direction:column;height:100vh;background:#fafafa}
header{padding:.5em 1em;background:#234;color:#fff;display:flex;gap:1em;align-items:center;flex-wrap:wrap}
header input,header textarea{font:inherit}
#system{width:24em;height:1.6em}
#log{flex:1;overflow-y:auto;padding:1em}
.msg{max-width:48em;margin:.4em 0;padding:.5em .8em;border-radius:.5em;white-space:pre-wrap}
.user{background:#dde8f6;margin-left:auto}.assistant{background:#fff;border:1px solid #ddd}.error{color:#a00}
form{display:flex;gap:.5em;padding:.5em 1em;border-top:1px solid #ddd}
#input{flex:1;font:inherit;padding:.4em}
</style></head><body>
<header><b>pocket</b>
<label>system <textarea id="system" placeholder="system prompt"></textarea></label>
<label>temperature <input id="temp" type="number" min="0" max="2" step="0.1" value="0.8" style="width:4em"></label>
<label>max tokens <input id="max" type="number" min="1" step="1" value="512" style="width:5em"></label>
<label>key <input id="key" type="password" placeholder="--api-key, if set" style="width:9em"></label>
<button id="clear" type="button">clear</button></header>
<div id="log"></div>
<form id="form"><input id="input" autocomplete="off" placeholder="Say something"><button id="send">send</button>
<button id="stop" type="button" disabled>stop</button></form>
<script>
const $ = id => document.getElementById(id);
let chat = JSON.parse(localStorage.getItem('pocket.chat') || '[]');
$('system').value = localStorage.getItem('pocket.system') || '';
$('temp').value = localStorage.getItem('pocket.temp') || '0.8';
$('max').value = localStorage.getItem('pocket.max') || '512';
$('key').value = localStorage.getItem('pocket.key') || '';
let controller = null;
function save() {
  localStorage.setItem('pocket.chat', JSON.stringify(chat));
  localStorage.setItem('pocket.system', $('system').value);
  localStorage.setItem('pocket.temp', $('temp').value);
  localStorage.setItem('pocket.max', $('max').value);
  localStorage.setItem('pocket.key', $('key').value);
}
function bubble(role, text) {
  const d = document.createElement('div');
  d.className = 'msg ' + role; d.textContent = text;
  $('log').appendChild(d); $('log').scrollTop = $('log').scrollHeight;
  return d;
}
function render() { $('log').innerHTML = ''; for (const m of chat) bubble(m.role, m.content); }
async function send(text) {
  chat.push({role: 'user', content: text}); bubble('user', text);
  const out = bubble('assistant', ''); const reply = {role: 'assistant', content: ''};
  const messages = ($('system').value ? [{role: 'system', content: $('system').value}] : []).concat(chat);
  controller = new AbortController(); $('stop').disabled = false; $('send').disabled = true;
  try {
    const r = await fetch('/v1/chat/completions', {method: 'POST', signal: controller.signal,
      headers: Object.assign({'Content-Type': 'application/json'}, $('key').value ? {'Authorization': 'Bearer ' + $('key').value} : {}),
      body: JSON.stringify({messages, stream: true, temperature: parseFloat($('temp').value) || 0,
                            max_tokens: parseInt($('max').value) || 512})});
    if (!r.ok) throw new Error((await r.json()).error.message);
    const reader = r.body.getReader(); const dec = new TextDecoder(); let buf = '';
    for (;;) {
      const {value, done} = await reader.read(); if (done) break;
      buf += dec.decode(value, {stream: true});
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const line = buf.slice(0, i); buf = buf.slice(i + 2);
        if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
        const ev = JSON.parse(line.slice(6));
        if (ev.error) throw new Error(ev.error.message);
        const c = ev.choices && ev.choices[0] && ev.choices[0].delta && ev.choices[0].delta.content;
        if (c) { reply.content += c; out.textContent = reply.content; $('log').scrollTop = $('log').scrollHeight; }
      }
    }
  } catch (e) {
    if (e.name !== 'AbortError') { const d = bubble('error', String(e.message || e)); d.classList.add('error'); }
  }
  chat.push(reply); save();
  controller = null; $('stop').disabled = true; $('send').disabled = false;
}
$('form').onsubmit = e => { e.preventDefault(); const t = $('input').value.trim(); if (t && !controller) { $('input').value = ''; send(t); } };
$('stop').onclick = () => controller && controller.abort();
$('clear').onclick = () => { chat = []; save(); render(); };
$('system').onchange = save; $('temp').onchange = save; $('max').onchange = save; $('key').onchange = save;
render();
</script></body></html>
)PAGE";
    return page;
}

}  // namespace pocket::serve
