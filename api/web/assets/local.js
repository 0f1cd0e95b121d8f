// gds local breakdown. On the search page: pasting several lines into the
// box opens /local with them, and character results get their corporation
// and alliance. On /local: the list is broken down through
// POST /latest/local/ without leaving the page (without this script the
// form posts to the server, which renders the same page).
'use strict';
(() => {
  const API = '/latest';
  const KEY = 'gds.local';
  const $ = (s, r = document) => r.querySelector(s);
  const $$ = (s, r = document) => Array.from(r.querySelectorAll(s));
  const lines = (text) => text.split('\n').map((l) => l.trim()).filter((l) => l);

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v; else e.setAttribute(k, v);
    }
    for (const k of kids) if (k !== null && k !== undefined && k !== '') e.append(k);
    return e;
  }
  async function local(body, json) {
    const r = await fetch(API + '/local/', {
      method: 'POST', body, headers: { 'Content-Type': json ? 'application/json' : 'text/plain; charset=utf-8', Accept: 'application/json' },
    });
    let data = {};
    try { data = await r.json(); } catch (e) { /* not JSON: keep the status */ }
    if (!r.ok) {
      const err = new Error(data.error || r.statusText);
      err.status = r.status;
      err.wait = parseInt(r.headers.get('Retry-After') || r.headers.get('X-ESI-Error-Limit-Reset'), 10) || 0;
      throw err;
    }
    return data;
  }
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
  const aff = (corp, alliance) => el('small', { class: 'aff' },
    `${corp ? corp.name : ''} [${corp ? corp.ticker : ''}]` + (alliance ? ` · ${alliance.name} <${alliance.ticker}>` : ''));

  // ---- the search page ----
  const q = $('#q');
  if (q) {
    q.addEventListener('paste', (e) => {
      const text = (e.clipboardData || window.clipboardData).getData('text');
      if (lines(text).length < 2) return;
      e.preventDefault();
      try { sessionStorage.setItem(KEY, text); } catch (err) { return; }
      location.assign('/local');
    });
    // Character results the script draws get their affiliation from one
    // local call of their names.
    const known = new Map(); // character ID -> small.aff
    let timer = 0;
    const enrich = async () => {
      const todo = $$('#results a.r[data-cat="character"]').filter((a) => !$('.aff', a));
      if (!todo.length) return;
      const missing = todo.filter((a) => !known.has(a.dataset.id));
      if (missing.length) {
        const names = [...new Set(missing.map((a) => $('.n', a).textContent))].slice(0, 1000);
        try {
          const got = await local(JSON.stringify(names), true);
          const corps = new Map(got.corporations.map((c) => [c.corporation_id, c]));
          const alliances = new Map(got.alliances.map((a) => [a.alliance_id, a]));
          got.characters.forEach((c) => known.set(String(c.character_id), [corps.get(c.corporation_id), alliances.get(c.alliance_id)]));
        } catch (err) { return; } // the results stand without it
      }
      todo.forEach((a) => {
        const k = known.get(a.dataset.id);
        if (k && !$('.aff', a)) $('.n', a).append(aff(k[0], k[1]));
      });
    };
    new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(enrich, 250); })
      .observe($('#results'), { childList: true, subtree: true });
    return;
  }

  // ---- /local ----
  const form = $('#local'), box = $('#names'), status = $('#status'), results = $('#results');
  if (!form) return;
  const say = (msg, error) => { status.textContent = msg; status.classList.toggle('error', !!error); };
  let running = null;

  function section(title, count, kind, list) {
    const sec = el('section', { class: 'group' + (kind === 'chart' ? ' chart' : '') }, el('h2', null, title + ' ', el('span', { class: 'count' }, String(count))));
    if (kind !== 'chart') sec.dataset.kind = kind;
    if (kind === 'chart') sec.setAttribute('aria-label', 'Largest groups');
    sec.append(list);
    return sec;
  }
  function row(href, label, count, max) {
    return el('li', null, el('a', { class: 'r', href }, label,
      el('meter', { min: '0', max: String(max), value: String(count) }, String(count)), el('span', { class: 'c' }, String(count))));
  }
  function show(got) {
    const corps = new Map(got.corporations.map((c) => [c.corporation_id, c]));
    const alliances = new Map(got.alliances.map((a) => [a.alliance_id, a]));
    const out = [];
    const bars = got.alliances.map((a) => ({ name: a.name, ticker: `<${a.ticker}>`, count: a.count, href: `${API}/alliances/${a.alliance_id}/` }))
      .concat(got.corporations.filter((c) => !c.alliance_id)
        .map((c) => ({ name: c.name, ticker: `[${c.ticker}]`, count: c.count, href: `${API}/corporations/${c.corporation_id}/` })))
      .sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).slice(0, 8);
    if (bars.length) {
      const ol = el('ol');
      bars.forEach((b) => ol.append(row(b.href, el('span', { class: 'n' }, b.name + ' ', el('span', { class: 'tk' }, b.ticker)), b.count, bars[0].count)));
      out.push(section('Largest groups', got.characters.length, 'chart', ol));
    }
    if (got.alliances.length) {
      const ol = el('ol');
      got.alliances.forEach((a) => ol.append(row(`${API}/alliances/${a.alliance_id}/`,
        el('span', { class: 'n' }, a.name + ' ', el('span', { class: 'tk' }, `<${a.ticker}>`)), a.count, got.alliances[0].count)));
      out.push(section('Alliances', got.alliances.length, 'alliances', ol));
    }
    if (got.corporations.length) {
      const ol = el('ol');
      got.corporations.forEach((c) => {
        const a = alliances.get(c.alliance_id);
        ol.append(row(`${API}/corporations/${c.corporation_id}/`, el('span', { class: 'n' }, c.name + ' ', el('span', { class: 'tk' }, `[${c.ticker}]`),
          a ? ' ' : '', a ? el('span', { class: 'tk' }, `<${a.ticker}>`) : ''), c.count, got.corporations[0].count));
      });
      out.push(section('Corporations', got.corporations.length, 'corporations', ol));
    }
    if (got.characters.length) {
      const ol = el('ol');
      got.characters.forEach((c) => ol.append(el('li', null, el('a', { class: 'r', href: `${API}/characters/${c.character_id}/`, 'data-id': c.character_id },
        el('span', { class: 'n' }, c.name, aff(corps.get(c.corporation_id), alliances.get(c.alliance_id))), el('span', { class: 'id' }, String(c.character_id))))));
      out.push(section('Pilots', got.characters.length, 'characters', ol));
    }
    if (got.unknown.length) {
      const ul = el('ul', { class: 'unknown' });
      got.unknown.forEach((n) => ul.append(el('li', null, n)));
      out.push(section('Not a pilot’s name', got.unknown.length, 'unknown', ul));
    }
    results.replaceChildren(...out);
    const n = got.characters.length;
    let s = `${plural(n, 'pilot', 'pilots')} in ${plural(got.corporations.length, 'corporation', 'corporations')} and ${plural(got.alliances.length, 'alliance', 'alliances')}.`;
    if (got.unknown.length) s += ` ${got.unknown.length} ${got.unknown.length === 1 ? 'name is' : 'names are'} no pilot's.`;
    say(s);
    document.dispatchEvent(new CustomEvent('gds:local', { detail: { pilots: n } }));
  }

  async function run() {
    const text = box.value;
    if (!lines(text).length) { results.replaceChildren(); say('There are no names in that text: paste one name a line.', true); return; }
    const mine = {};
    running = mine;
    say('Breaking the list down…');
    try {
      const got = await local(text, false);
      if (running === mine) show(got);
    } catch (e) {
      if (running !== mine) return;
      if (e.status === 420 || e.status === 429 || e.status === 503) {
        say(`The server asks to wait${e.wait ? ` ${plural(e.wait, 'second', 'seconds')}` : ''} (${e.status}): ${e.message}`, true);
      } else if (e.status) {
        say(`The API refused this list (${e.status}): ${e.message}`, true);
      } else {
        say('The server cannot be reached; check the connection and try again.', true);
      }
    }
  }

  form.addEventListener('submit', (e) => { e.preventDefault(); run(); });
  box.addEventListener('paste', () => setTimeout(run, 0));
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(); }
  });
  document.addEventListener('keydown', (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const items = $$('#results a.r');
    const at = items.indexOf(document.activeElement);
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      if (at < 0) return; // in the text box, arrows move the caret
      e.preventDefault();
      if (e.key === 'ArrowDown') items[Math.min(at + 1, items.length - 1)].focus();
      else if (at === 0) box.focus();
      else items[at - 1].focus();
    } else if (e.key === '/' && document.activeElement !== box) {
      e.preventDefault();
      box.focus();
    } else if (e.key === 'Escape' && at >= 0) {
      e.preventDefault();
      box.focus();
    }
  });

  let pasted = null;
  try { pasted = sessionStorage.getItem(KEY); sessionStorage.removeItem(KEY); } catch (e) { /* storage off */ }
  if (pasted) { box.value = pasted; run(); }
})();
