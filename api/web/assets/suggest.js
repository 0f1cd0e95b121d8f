// gds search page: typeahead through GET /latest/suggest/ (names as they are
// typed, typos forgiven) and "Did you mean" when a search finds nothing.
// Without this script the server renders "Did you mean" itself.
'use strict';
(() => {
  const API = '/latest';
  const LIMIT = 8, MIN = 2, DEBOUNCE = 250, GAP = 600; // ms between calls at most once per GAP
  const $ = (s, r = document) => r.querySelector(s);
  const $$ = (s, r = document) => Array.from(r.querySelectorAll(s));
  const q = $('#q'), list = $('#suggest'), dym = $('#didyoumean'), results = $('#results');
  const LABEL = Object.fromEntries($$('input[name=cat]').map((i) => [i.value, i.nextElementSibling.textContent]));
  const KIND = { exact: 'exact', ticker: 'ticker', prefix: 'starts with', word: 'word', contains: 'contains', typo: 'typo' };
  let timer = 0, ctrl = null, last = 0, picked = '';

  function params(text) {
    const lang = (($('input[name=lang]:checked') || {}).value) || 'en';
    const cats = $$('input[name=cat]:checked').map((i) => i.value);
    const p = new URLSearchParams({ search: text, limit: String(LIMIT), language: lang });
    if (cats.length) p.set('categories', cats.join(','));
    return { p, lang, cats };
  }
  function pageURL(name, lang, cats) {
    const p = new URLSearchParams({ q: name });
    if (lang !== 'en') p.set('lang', lang);
    if (cats.length) p.set('cat', cats.join(','));
    return '/?' + p.toString().replace(/%2C/g, ',');
  }
  async function suggest(text, signal) {
    const { p, lang, cats } = params(text);
    const r = await fetch(API + '/suggest/?' + p.toString().replace(/%2C/g, ','), { headers: { Accept: 'application/json' }, signal });
    if (!r.ok) return { list: [], lang, cats };
    return { list: await r.json(), lang, cats };
  }
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const k of kids) e.append(k);
    return e;
  }
  function hide() { list.hidden = true; list.replaceChildren(); }
  // settled records the text whose suggestions are on screen (or known to
  // be none), so that a test can wait for the typeahead to finish.
  function settled(text) { list.dataset.for = text; }

  // pick searches the name chosen: the page's own script takes the input.
  function pick(name) {
    hide();
    picked = name;
    q.value = name;
    q.dispatchEvent(new Event('input', { bubbles: true }));
    q.form.requestSubmit();
    q.focus();
  }

  async function typed() {
    const text = q.value.trim();
    if (ctrl) ctrl.abort();
    if (Array.from(text).length < MIN || text === picked) { hide(); settled(text); return; }
    const wait = last + GAP - performance.now();
    if (wait > 0) { clearTimeout(timer); timer = setTimeout(typed, wait); return; }
    last = performance.now();
    const c = new AbortController();
    ctrl = c;
    try {
      const got = await suggest(text, c.signal);
      if (ctrl !== c || q.value.trim() !== text) return;
      // Nothing to offer beyond what is typed: no list.
      const offer = got.list.filter((s) => s.name.toLowerCase() !== text.toLowerCase() || s.match === 'ticker');
      if (!offer.length) { hide(); settled(text); return; }
      list.replaceChildren(...offer.map((s) => el('li', null,
        el('a', { href: pageURL(s.name, got.lang, got.cats), 'data-name': s.name, 'data-match': s.match },
          el('span', { class: 'n' }, s.name), el('span', { class: 'k' }, `${LABEL[s.category] || s.category} · ${KIND[s.match] || s.match}`)))));
      list.hidden = false;
      settled(text);
    } catch (e) {
      if (e.name !== 'AbortError') { hide(); settled(text); }
    }
  }

  // didYouMean fills "Did you mean" for a search the page found nothing for.
  async function didYouMean(text) {
    try {
      const got = await suggest(text, new AbortController().signal);
      if (q.value.trim() !== text || results.children.length) return;
      const seen = new Set(), names = [];
      for (const s of got.list) {
        const k = s.name.toLowerCase();
        if (!seen.has(k) && names.length < 3) { seen.add(k); names.push(s.name); }
      }
      if (!names.length) { dym.hidden = true; return; }
      const kids = ['Did you mean '];
      names.forEach((n, i) => { if (i) kids.push(' or '); kids.push(el('a', { href: pageURL(n, got.lang, got.cats) }, n)); });
      kids.push('?');
      dym.replaceChildren(...kids);
      dym.hidden = false;
    } catch (e) { dym.hidden = true; }
  }

  q.addEventListener('input', () => { dym.hidden = true; clearTimeout(timer); timer = setTimeout(typed, DEBOUNCE); });
  // Down from the box goes into the suggestions while they show (the
  // page's script would go to the results).
  q.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' || e.key === 'Enter') hide();
    if (e.key === 'ArrowDown' && !list.hidden && !e.altKey && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      e.stopPropagation();
      $('a', list).focus();
    }
  });
  list.addEventListener('click', (e) => {
    const a = e.target.closest('a');
    if (!a || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    pick(a.dataset.name);
  });
  list.addEventListener('keydown', (e) => {
    const items = $$('a', list), at = items.indexOf(document.activeElement);
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      e.stopPropagation();
      if (e.key === 'ArrowDown') items[Math.min(at + 1, items.length - 1)].focus();
      else if (at <= 0) q.focus(); else items[at - 1].focus();
    } else if (e.key === 'Enter' && at >= 0) {
      e.preventDefault();
      pick(items[at].dataset.name);
    } else if (e.key === 'Escape') {
      e.stopPropagation();
      hide();
      q.focus();
    }
  }, true);
  // The page's script tells when its results are on screen.
  document.addEventListener('gds:painted', () => {
    const text = q.value.trim();
    if (results.children.length || !text) { dym.hidden = true; return; }
    didYouMean(text);
  });
})();
