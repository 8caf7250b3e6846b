// The search page: reads only (no token), built with DOM calls; only the API's snippet (already
// HTML-escaped, matches wrapped in <mark>) is set as HTML. Its requests go through the typed
// client (service/http/contract/client.ts), so their parameters and answers are the route
// schemas'; scripts/build-page.ts bundles this file into service/web/assets/app.js.
import {
  ApiError,
  createClient,
  type ItemType,
  type SearchParams,
  type SearchResponse,
} from '../../http/contract/client';

const PAGE = 10;
// Tags offered as checkboxes: the most frequent among the matches (and those checked).
const TAG_CHOICES = 15;
const SORTS = ['relevance', 'date:desc', 'date:asc', 'updated:desc'] as const;
// The checked facet values (the URL's `type` and `tag`, repeated).
const checked = { type: new Set<string>(), tag: new Set<string>() };
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

/** The form's search and the checked facets, as the URL of the page shows it (without the paging). */
function formParams(): URLSearchParams {
  const params = new URLSearchParams();
  const q = value('q').trim();
  if (q) params.set('q', q);
  for (const t of checked.type) params.append('type', t);
  for (const t of checked.tag) params.append('tag', t);
  for (const id of ['date_from', 'date_to', 'sort']) if (value(id)) params.set(id, value(id));
  return params;
}

/** One facet's checkboxes: its values with their counts (disjunctive: a facet ignores its own filter), checked ones kept. */
function showFacet(name: 'type' | 'tag', counts: Record<string, number>): void {
  const box = $(`facet-${name}`);
  box.querySelectorAll('label').forEach((l) => l.remove());
  const values = Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  for (const v of checked[name]) if (!(v in counts)) values.push([v, 0]);
  for (const [v, n] of name === 'type' ? values.sort((a, b) => (a[0] < b[0] ? -1 : 1)) : values) {
    const label = document.createElement('label');
    const input = document.createElement('input');
    input.type = 'checkbox';
    input.name = name;
    input.value = v;
    input.checked = checked[name].has(v);
    input.addEventListener('change', () => {
      if (input.checked) checked[name].add(v);
      else checked[name].delete(v);
      offset = 0;
      void search(true);
    });
    label.appendChild(input);
    label.appendChild(text('span', ` ${v} (${n})`));
    box.appendChild(label);
  }
}

function showFacets(body: SearchResponse): void {
  showFacet('type', body.facets?.type ?? {});
  showFacet('tag', body.facets?.tag ?? {});
}

/** Searches (or, with an empty box, browses) with the form's filters; the facets come with the page. */
async function search(push: boolean): Promise<void> {
  const form = formParams();
  if (push) history.replaceState(null, '', `/?${form.toString()}`);
  $('results').textContent = '';
  const params: SearchParams = {
    q: form.get('q') ?? '',
    type: [...checked.type] as ItemType[],
    tag: [...checked.tag],
    facets: ['type', 'tag'],
    facet_limit: TAG_CHOICES,
    limit: PAGE,
    offset,
  };
  if (form.get('date_from')) params.date_from = form.get('date_from')!;
  if (form.get('date_to')) params.date_to = form.get('date_to')!;
  const sort = form.get('sort');
  if (sort) params.sort = sort as (typeof SORTS)[number];
  try {
    const body = await api.search(params);
    $('status').className = '';
    $('status').textContent = `${body.total} result${body.total === 1 ? '' : 's'}`;
    showFacets(body);
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
  for (const t of params.getAll('type')) checked.type.add(t);
  for (const t of params.getAll('tag')) checked.tag.add(t);
  for (const id of ['date_from', 'date_to']) $<HTMLInputElement>(id).value = params.get(id) || '';
  const sort = params.get('sort') || '';
  $<HTMLSelectElement>('sort').value = (SORTS as readonly string[]).includes(sort) ? sort : '';
  for (const id of ['sort', 'date_from', 'date_to'])
    $(id).addEventListener('change', () => {
      offset = 0;
      void search(true);
    });
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
  // An empty box browses: every item, newest first, with the facets to narrow them.
  void search(false);
});
