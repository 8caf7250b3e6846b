// The search page: reads only (no token), built with DOM calls; only the API's snippet (already
// HTML-escaped, matches wrapped in <mark>) is set as HTML. Its requests go through the typed
// client (service/http/contract/client.ts), so their parameters and answers are the route
// schemas'; scripts/build-page.ts bundles this file into service/web/assets/app.js.
import { ApiError, createClient, type ItemType, type SearchParams } from '../../http/contract/client';

const PAGE = 10;
const api = createClient({ baseUrl: location.origin });
const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const value = (id: string) => $<HTMLInputElement | HTMLSelectElement>(id).value;
let offset = 0;

function text(tag: string, value: string, cls?: string): HTMLElement {
  const el = document.createElement(tag);
  el.textContent = value;
  if (cls) el.className = cls;
  return el;
}

function link(title: string, url: string | null): HTMLElement {
  if (!url) return text('span', title);
  const a = text('a', title) as HTMLAnchorElement;
  a.href = url;
  return a;
}

function showError(e: unknown): void {
  const status = $('status');
  status.className = 'error';
  if (e instanceof ApiError && e.status === 429)
    status.textContent = `Too many requests: try again in ${e.retryAfter ?? '?'} s.`;
  else if (e instanceof ApiError) status.textContent = e.body.message || `Request failed (${e.status}).`;
  else status.textContent = 'Request failed: the service did not answer.';
}

/** The form's search, as the URL of the page shows it (without the paging). */
function formParams(): URLSearchParams {
  const params = new URLSearchParams();
  const q = value('q').trim();
  if (q) params.set('q', q);
  if (value('type')) params.set('type', value('type'));
  if (value('tag').trim()) params.set('tag', value('tag').trim());
  return params;
}

async function search(push: boolean): Promise<void> {
  const form = formParams();
  if (push) history.replaceState(null, '', `/?${form.toString()}`);
  $('results').textContent = '';
  const q = form.get('q');
  if (!q) {
    $('status').textContent = '';
    return;
  }
  const params: SearchParams = { q, limit: PAGE, offset };
  if (form.get('type')) params.type = form.get('type') as ItemType;
  if (form.get('tag')) params.tag = form.get('tag')!;
  try {
    const body = await api.search(params);
    $('status').className = '';
    $('status').textContent = `${body.total} result${body.total === 1 ? '' : 's'}`;
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
  } catch (e) {
    showError(e);
  }
}

async function ask(message: string): Promise<void> {
  $('answer').textContent = '';
  $('sources').textContent = '';
  try {
    for await (const e of api.chatStream({ message })) {
      if (e.event === 'delta') $('answer').textContent += e.data.text;
      if (e.event === 'sources') {
        for (const s of e.data.sources) {
          const li = document.createElement('li');
          li.appendChild(link(s.title, s.url));
          $('sources').appendChild(li);
        }
      }
      if (e.event === 'error') $('answer').textContent += `\n[${e.data.message}]`;
    }
  } catch (e) {
    showError(e);
  }
}

document.addEventListener('DOMContentLoaded', () => {
  const params = new URLSearchParams(location.search);
  $<HTMLInputElement>('q').value = params.get('q') || '';
  $<HTMLSelectElement>('type').value = params.get('type') || '';
  $<HTMLInputElement>('tag').value = params.get('tag') || '';
  $('search-form').addEventListener('submit', (e) => {
    e.preventDefault();
    offset = 0;
    void search(true);
  });
  $('prev').addEventListener('click', () => {
    offset = Math.max(0, offset - PAGE);
    void search(false);
  });
  $('next').addEventListener('click', () => {
    offset += PAGE;
    void search(false);
  });
  $('chat-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const m = value('message').trim();
    if (m) void ask(m);
  });
  if (value('q')) void search(false);
});
