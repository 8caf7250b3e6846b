'use strict';
// The search page: reads only (no token), built with DOM calls; only the API's snippet (already
// HTML-escaped, matches wrapped in <mark>) is set as HTML.
(function () {
  const PAGE = 10;
  const $ = (id) => document.getElementById(id);
  let offset = 0;

  function text(tag, value, cls) {
    const el = document.createElement(tag);
    el.textContent = value;
    if (cls) el.className = cls;
    return el;
  }

  function link(title, url) {
    if (!url) return text('span', title);
    const a = text('a', title);
    a.href = url;
    return a;
  }

  function showError(res, body) {
    const status = $('status');
    status.className = 'error';
    if (res.status === 429) {
      const wait = res.headers.get('Retry-After') || '?';
      status.textContent = 'Too many requests: try again in ' + wait + ' s.';
    } else {
      status.textContent = (body && body.message) || 'Request failed (' + res.status + ').';
    }
  }

  async function search(push) {
    const q = $('q').value.trim();
    const params = new URLSearchParams();
    if (q) params.set('q', q);
    if ($('type').value) params.set('type', $('type').value);
    if ($('tag').value.trim()) params.set('tag', $('tag').value.trim());
    if (push) history.replaceState(null, '', '/?' + params.toString());
    params.set('limit', String(PAGE));
    params.set('offset', String(offset));
    $('results').textContent = '';
    if (!q) { $('status').textContent = ''; return; }
    const res = await fetch('/api/search?' + params.toString());
    const body = await res.json().catch(() => undefined);
    if (!res.ok) { showError(res, body); return; }
    $('status').className = '';
    $('status').textContent = body.total + ' result' + (body.total === 1 ? '' : 's');
    for (const r of body.results) {
      const li = document.createElement('li');
      const h = document.createElement('h3');
      h.appendChild(link(r.title, r.url));
      li.appendChild(h);
      li.appendChild(text('div', r.type, 'meta'));
      const p = document.createElement('p');
      p.className = 'snippet';
      p.innerHTML = r.snippet; // HTML-escaped by the API
      li.appendChild(p);
      $('results').appendChild(li);
    }
    $('prev').hidden = offset === 0;
    $('next').hidden = offset + PAGE >= body.total;
  }

  async function ask(message) {
    $('answer').textContent = '';
    $('sources').textContent = '';
    const res = await fetch('/api/chat', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ message }),
    });
    if (!res.ok || !res.body) { showError(res, await res.json().catch(() => undefined)); return; }
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = (block.match(/^event: (.*)$/m) || [])[1];
        const data = JSON.parse((block.match(/^data: (.*)$/m) || [, '{}'])[1]);
        if (event === 'delta') $('answer').textContent += data.text;
        if (event === 'sources') {
          for (const s of data.sources) {
            const li = document.createElement('li');
            li.appendChild(link(s.title, s.url));
            $('sources').appendChild(li);
          }
        }
        if (event === 'error') $('answer').textContent += '\n[' + data.message + ']';
      }
    }
  }

  document.addEventListener('DOMContentLoaded', () => {
    const params = new URLSearchParams(location.search);
    $('q').value = params.get('q') || '';
    $('type').value = params.get('type') || '';
    $('tag').value = params.get('tag') || '';
    $('search-form').addEventListener('submit', (e) => { e.preventDefault(); offset = 0; search(true); });
    $('prev').addEventListener('click', () => { offset = Math.max(0, offset - PAGE); search(false); });
    $('next').addEventListener('click', () => { offset += PAGE; search(false); });
    $('chat-form').addEventListener('submit', (e) => { e.preventDefault(); const m = $('message').value.trim(); if (m) ask(m); });
    if ($('q').value) search(false);
  });
})();
