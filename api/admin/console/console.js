// gds analysts' console: runs GET /admin/query and shows hits, facets and
// timing. No inline script or style (the page's CSP forbids both); every
// value from the server goes into the page as text, never as HTML.
'use strict';

const tokenKey = 'gds-admin-token';
const $ = (id) => document.getElementById(id);
let fields = [];       // the analysts' fields, from /admin/fields
let suggestions = [];  // field names offered for the word being typed
let chosen = -1;

// api fetches an operator route, with the admin token when the tab has one.
async function api(path) {
  const headers = {};
  const token = sessionStorage.getItem(tokenKey);
  if (token) headers.Authorization = 'Bearer ' + token;
  const resp = await fetch(path, { headers, cache: 'no-store' });
  if (resp.status === 401) {
    showLogin(token ? 'The token was refused.' : '');
    throw new Error('The admin token is required.');
  }
  return resp;
}

async function errorOf(resp) {
  try {
    const body = await resp.json();
    if (body && body.error) return body.error;
  } catch (e) { /* not JSON */ }
  return 'HTTP ' + resp.status;
}

function showLogin(message) {
  $('login').hidden = false;
  $('console').hidden = true;
  $('login-error').textContent = message;
  $('token').focus();
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

async function loadFields() {
  const resp = await api('/admin/fields');
  if (!resp.ok) throw new Error(await errorOf(resp));
  const body = await resp.json();
  fields = body.fields;
  $('cap').textContent = body.limits.export;
  $('limit').max = body.limits.json;
  const sel = $('category');
  while (sel.options.length > 1) sel.remove(1);
  for (const c of body.categories) sel.add(new Option(c, c));
  const tbody = $('field-list').querySelector('tbody');
  tbody.replaceChildren();
  for (const f of fields) {
    const tr = el('tr');
    const name = el('td');
    const b = el('button', f.name, 'link field-name');
    b.type = 'button';
    b.title = 'add to the query';
    b.addEventListener('click', () => insertField(f.name));
    name.append(b);
    tr.append(name, el('td', f.type + (f.stored ? ', stored' : '')),
      el('td', (f.categories || ['all']).join(' ')), el('td', f.about), el('td', f.example, 'example'));
    tbody.append(tr);
  }
  $('signout').hidden = !sessionStorage.getItem(tokenKey);
}

function params(format) {
  const p = new URLSearchParams();
  p.set('q', $('q').value.trim());
  // Exports stream hits only: facets are counted on the page's query.
  const names = format ? ['category', 'fields', 'sort'] : ['category', 'fields', 'facets', 'sort'];
  for (const name of names) {
    const v = $(name).value.trim();
    if (v) p.set(name, v);
  }
  if (format) p.set('format', format);
  else if ($('limit').value) p.set('limit', $('limit').value);
  return p;
}

async function run() {
  $('error').textContent = '';
  const p = params('');
  history.replaceState(null, '', '#' + p.toString());
  $('status').textContent = 'Running…';
  const started = performance.now();
  let resp;
  try {
    resp = await api('/admin/query?' + p.toString());
  } catch (e) {
    $('status').textContent = '';
    $('error').textContent = e.message;
    return;
  }
  if (!resp.ok) {
    // The last answer's hits and facets would read as this query's.
    $('status').textContent = '';
    $('facets-out').replaceChildren();
    $('results').hidden = true;
    $('error').textContent = await errorOf(resp);
    return;
  }
  const res = await resp.json();
  const wall = performance.now() - started;
  $('generation').textContent = 'generation ' + res.generation;
  $('status').textContent = `${res.hits.length} of ${res.total} ${res.total === 1 ? 'hit' : 'hits'} · ${res.took_ms.toFixed(1)} ms on the server, ${wall.toFixed(0)} ms here`;
  renderFacets(res.facets || []);
  renderHits(res.hits);
}

function renderFacets(facets) {
  const out = $('facets-out');
  out.replaceChildren();
  for (const f of facets) {
    const box = el('div', undefined, 'facet');
    box.append(el('h3', `${f.field} (${f.type}) · ${f.total} values, ${f.missing} without, ${f.other} in other terms`));
    const max = Math.max(1, ...f.buckets.map((b) => b.count));
    for (const b of f.buckets) {
      const row = el('div', undefined, 'bucket');
      const bar = el('span', undefined, 'bar');
      bar.style.width = (100 * b.count / max) + '%'; // CSSOM, which the CSP allows
      const track = el('span', undefined, 'track');
      track.append(bar);
      row.append(el('span', b.term, 'term'), track, el('span', String(b.count), 'count'));
      box.append(row);
    }
    out.append(box);
  }
}

function cell(v) {
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) return v.join(' | ');
  return String(v);
}

function renderHits(hits) {
  const table = $('results');
  const cols = [];
  const asked = $('fields').value.split(',').map((s) => s.trim()).filter((s) => s && s !== '*');
  for (const a of asked) cols.push(a);
  for (const h of hits) for (const k of Object.keys(h.fields || {}).sort()) if (!cols.includes(k)) cols.push(k);
  const head = table.querySelector('thead tr');
  head.replaceChildren(...['id', 'category', 'name', 'score', ...cols].map((c) => el('th', c)));
  const body = table.querySelector('tbody');
  body.replaceChildren();
  for (const h of hits) {
    const tr = el('tr');
    tr.append(el('td', String(h.id)), el('td', h.category), el('td', h.name), el('td', h.score.toFixed(3), 'num'));
    for (const c of cols) tr.append(el('td', cell((h.fields || {})[c])));
    body.append(tr);
  }
  table.hidden = false;
}

async function exportAs(format) {
  $('error').textContent = '';
  const p = format === 'json' ? params('') : params(format);
  let resp;
  try {
    resp = await api('/admin/query?' + p.toString());
  } catch (e) {
    $('error').textContent = e.message;
    return;
  }
  if (!resp.ok) {
    $('error').textContent = await errorOf(resp);
    return;
  }
  // A blob, so the token travels in the header rather than a link.
  const url = URL.createObjectURL(await resp.blob());
  const a = el('a');
  a.href = url;
  a.download = 'gds-query.' + format;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  $('status').textContent = `Exported ${resp.headers.get('X-Total-Hits') || ''} hits as ${format}.`.replace('  ', ' ');
}

// Field name completion: the word before the cursor, when it has no colon
// yet, is completed from the fields of the chosen category.
function currentWord() {
  const q = $('q');
  const upto = q.value.slice(0, q.selectionStart);
  const m = /[^\s+\-()]*$/.exec(upto);
  return { start: upto.length - m[0].length, word: m[0] };
}

function updateSuggestions() {
  const { word } = currentWord();
  const cat = $('category').value;
  suggestions = word && !word.includes(':')
    ? fields.filter((f) => f.name.startsWith(word.toLowerCase()) && f.name !== word &&
        (!cat || !f.categories || f.categories.includes(cat))).map((f) => f.name)
    : [];
  chosen = suggestions.length ? 0 : -1;
  renderSuggestions();
}

function renderSuggestions() {
  const ul = $('suggest');
  ul.replaceChildren();
  suggestions.forEach((name, i) => {
    const li = el('li', name + ':');
    li.setAttribute('role', 'option');
    if (i === chosen) li.className = 'chosen';
    li.addEventListener('mousedown', (e) => { e.preventDefault(); accept(i); });
    ul.append(li);
  });
  ul.hidden = suggestions.length === 0;
}

function accept(i) {
  const q = $('q');
  const { start } = currentWord();
  const rest = q.value.slice(q.selectionStart);
  const text = suggestions[i] + ':';
  q.value = q.value.slice(0, start) + text + rest;
  q.selectionStart = q.selectionEnd = start + text.length;
  suggestions = [];
  renderSuggestions();
  q.focus();
}

function insertField(name) {
  const q = $('q');
  q.value = (q.value.trim() ? q.value.trim() + ' ' : '') + name + ':';
  q.focus();
  q.selectionStart = q.selectionEnd = q.value.length;
}

function fromHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  if (!p.get('q')) return false;
  for (const name of ['q', 'category', 'fields', 'facets', 'sort', 'limit']) {
    if (p.has(name)) $(name).value = p.get(name);
  }
  return true;
}

async function start() {
  try {
    await loadFields();
  } catch (e) {
    if ($('login').hidden) $('error').textContent = e.message;
    return;
  }
  $('login').hidden = true;
  $('console').hidden = false;
  $('error').textContent = '';
  if (fromHash()) run();
}

document.addEventListener('DOMContentLoaded', () => {
  $('query-form').addEventListener('submit', (e) => { e.preventDefault(); suggestions = []; renderSuggestions(); run(); });
  $('login').addEventListener('submit', (e) => {
    e.preventDefault();
    sessionStorage.setItem(tokenKey, $('token').value);
    $('token').value = '';
    start();
  });
  $('signout').addEventListener('click', () => { sessionStorage.removeItem(tokenKey); location.reload(); });
  $('export-csv').addEventListener('click', () => exportAs('csv'));
  $('export-jsonl').addEventListener('click', () => exportAs('jsonl'));
  $('export-json').addEventListener('click', () => exportAs('json'));
  const q = $('q');
  q.addEventListener('input', updateSuggestions);
  q.addEventListener('blur', () => { suggestions = []; renderSuggestions(); });
  q.addEventListener('keydown', (e) => {
    if (!suggestions.length) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      chosen = (chosen + (e.key === 'ArrowDown' ? 1 : suggestions.length - 1)) % suggestions.length;
      renderSuggestions();
    } else if (e.key === 'Tab' || e.key === 'Enter') {
      e.preventDefault();
      accept(chosen);
    } else if (e.key === 'Escape') {
      suggestions = [];
      renderSuggestions();
    }
  });
  start();
});
