// gds search page: search as you type over the public API. The page works
// without this script (the server renders results for the URL's state);
// this makes it live: debounced, cancelled, budgeted requests, state in the
// URL with Back/Forward, keyboard navigation and a details panel whose every
// fact links to the API call that gave it.
'use strict';
(() => {
  const API = '/latest';
  const SHOWN = 8;        // results per category named at first (as the server renders)
  const MORE = 50;        // results named per "Show more"
  const MIN = 3, MAX = 256;
  const DEBOUNCE = 200;   // ms of quiet typing before a search
  const BURST = 1500;     // ms: searches closer than this share one history entry
  // A search costs 2 tokens of the public budget (1,200 per 5 minutes per
  // address, 4 a second); the page spends at most 1 search a second
  // sustained (half of it), in bursts of at most 20.
  const bucket = { tokens: 20, max: 20, perMs: 1 / 1000, t: performance.now() };

  const $ = (s, r = document) => r.querySelector(s);
  const $$ = (s, r = document) => Array.from(r.querySelectorAll(s));
  const form = $('#search'), q = $('#q'), status = $('#status'), results = $('#results');
  const detail = $('#detail'), layout = $('.layout'), apiP = $('#api'), apiA = $('#apicall');
  const CATS = $$('input[name=cat]').map((i) => i.value);
  const LABEL = Object.fromEntries($$('input[name=cat]').map((i) => [i.value, i.nextElementSibling.textContent]));
  const LOOKUP = {
    agent: '/characters/%/', alliance: '/alliances/%/', character: '/characters/%/',
    constellation: '/universe/constellations/%/', corporation: '/corporations/%/',
    faction: '/universe/factions/', inventory_type: '/universe/types/%/', region: '/universe/regions/%/',
    solar_system: '/universe/systems/%/', station: '/universe/stations/%/',
  };

  // ---- state <-> URL <-> form ----
  function fromForm() {
    return {
      q: q.value, lang: (($('input[name=lang]:checked') || {}).value) || 'en',
      strict: $('input[name=strict]').checked,
      cats: $$('input[name=cat]:checked').map((i) => i.value), item: current.item,
    };
  }
  function fromURL() {
    const p = new URLSearchParams(location.search);
    const lang = p.get('lang') || 'en';
    const want = new Set(p.getAll('cat').join(',').split(','));
    return {
      q: p.get('q') || '', lang: $(`input[name=lang][value="${CSS.escape(lang)}"]`) ? lang : 'en',
      strict: ['1', 'true', 'on'].includes(p.get('strict')),
      cats: CATS.filter((c) => want.has(c)), item: p.get('item') || '',
    };
  }
  function toURL(st) {
    const p = new URLSearchParams();
    if (st.q) p.set('q', st.q);
    if (st.lang !== 'en') p.set('lang', st.lang);
    if (st.strict) p.set('strict', '1');
    if (st.cats.length) p.set('cat', st.cats.join(','));
    if (st.item) p.set('item', st.item);
    const s = p.toString().replace(/%2C/g, ',');
    return '/' + (s ? '?' + s : '');
  }
  function toForm(st) {
    q.value = st.q;
    $$('input[name=lang]').forEach((i) => { i.checked = i.value === st.lang; });
    $('input[name=strict]').checked = st.strict;
    $$('input[name=cat]').forEach((i) => { i.checked = st.cats.includes(i.value); });
  }
  let current = { q: '', lang: 'en', strict: false, cats: [], item: '' };
  let lastPush = 0;
  function record(st, how) {
    const url = toURL(st);
    if (url === location.pathname + location.search) return;
    const now = performance.now();
    if (how === 'typing' && now - lastPush < BURST) history.replaceState(null, '', url);
    else history.pushState(null, '', url);
    if (how === 'typing') lastPush = now;
    else lastPush = 0;
  }

  // ---- the API ----
  class APIError extends Error {
    constructor(status, msg, wait) { super(msg); this.status = status; this.wait = wait; }
  }
  async function call(path, opts = {}) {
    let r;
    try {
      r = await fetch(API + path, { headers: { Accept: 'application/json' }, ...opts });
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      throw new APIError(0, 'The server cannot be reached; check the connection and try again.', 0);
    }
    if (r.ok) return r.json();
    let body = {};
    try { body = await r.json(); } catch (e) { /* not JSON: keep the status */ }
    const secs = (h) => { const v = parseInt(r.headers.get(h), 10); return v >= 0 ? v : NaN; };
    let wait = secs('Retry-After');
    if (isNaN(wait)) wait = secs('X-ESI-Error-Limit-Reset');
    throw new APIError(r.status, body.error || r.statusText, isNaN(wait) ? 0 : wait);
  }
  function lang(st) { return 'language=' + encodeURIComponent(st.lang); }
  function searchPath(st) {
    const p = new URLSearchParams({
      search: st.q.trim(), categories: (st.cats.length ? st.cats : CATS).join(','),
      strict: String(st.strict), language: st.lang,
    });
    return '/search/?' + p.toString().replace(/%2C/g, ',');
  }
  // readable shows a path's search text as typed (the link keeps it encoded).
  function readable(path) {
    try { return decodeURIComponent(path.replace(/\+/g, ' ')); } catch (e) { return path; }
  }
  // names resolves IDs with one POST /universe/names/ (at most 1,000).
  async function names(ids, st, signal) {
    const out = new Map();
    const list = [...new Set(ids.filter((id) => id > 0))].slice(0, 1000);
    if (!list.length) return out;
    try {
      const got = await call('/universe/names/?' + lang(st), {
        method: 'POST', body: JSON.stringify(list), signal, headers: { 'Content-Type': 'application/json' },
      });
      got.forEach((n) => out.set(n.id, n));
    } catch (e) {
      if (e.name === 'AbortError' || !(e instanceof APIError) || e.status !== 404) throw e;
      // One unknown ID fails the whole call (as in ESI): show IDs instead.
    }
    return out;
  }
  function wait(ms, signal) {
    return new Promise((res, rej) => {
      if (ms <= 0) return res();
      const t = setTimeout(res, ms);
      signal.addEventListener('abort', () => { clearTimeout(t); rej(new DOMException('aborted', 'AbortError')); }, { once: true });
    });
  }
  // spend takes one search from the budget, waiting for it when spent.
  async function spend(signal) {
    const now = performance.now();
    bucket.tokens = Math.min(bucket.max, bucket.tokens + (now - bucket.t) * bucket.perMs);
    bucket.t = now;
    bucket.tokens -= 1;
    if (bucket.tokens < 0) await wait(-bucket.tokens / bucket.perMs, signal);
  }

  // ---- searching ----
  const cache = new Map(); // search key -> {ids, names}
  let ctrl = null, timer = 0, retryTimer = 0;
  const keyOf = (st) => JSON.stringify([st.q.trim(), st.lang, st.strict, st.cats]);
  let shownKey = '';

  function say(msg, error) {
    status.textContent = msg;
    status.classList.toggle('error', !!error);
  }
  function problem(text) {
    const n = Array.from(text).length;
    if (n < MIN) return `Type at least ${MIN} characters: a search needs three to find names, and you typed ${n}.`;
    if (n > MAX) return `That is ${n} characters; no name is longer than ${MAX}.`;
    return '';
  }
  function clearResults() {
    results.replaceChildren();
    apiP.hidden = true;
    shownKey = '';
  }

  // run searches st now (from the cache when it can), replacing whatever
  // search is under way.
  async function run(st) {
    clearTimeout(retryTimer);
    if (ctrl) ctrl.abort();
    ctrl = null;
    const text = st.q.trim();
    if (!text) {
      clearResults();
      say('Type a name: a system, station, item type, character, corporation… Results appear as you type.');
      return;
    }
    const why = problem(text);
    if (why) { clearResults(); say(why, true); return; }
    const key = keyOf(st);
    if (key === shownKey) return;
    const hit = cache.get(key);
    if (hit) { show(st, hit); return; }
    const c = new AbortController();
    ctrl = c;
    const started = performance.now();
    try {
      await spend(c.signal);
      const ids = await call(searchPath(st), { signal: c.signal });
      const first = [];
      for (const cat of Object.keys(ids)) first.push(...ids[cat].slice(0, SHOWN));
      const got = { ids, names: await names(first, st, c.signal), started };
      cache.set(key, got);
      if (ctrl === c) show(st, got);
    } catch (e) {
      if (e.name === 'AbortError') return;
      if (ctrl === c) failed(e, st);
    }
  }

  function failed(e, st) {
    if (!(e instanceof APIError)) { say('Something went wrong showing the results: ' + e.message, true); return; }
    const again = () => run(st);
    if (e.status === 420 || e.status === 429 || e.status === 503) {
      let left = Math.max(1, e.wait || 5);
      const why = e.status === 420
        ? 'This address got too many error answers, so the API pauses it.'
        : e.status === 429 ? 'This address made too many searches in a short time.'
          : 'The server is busy or still building its index.';
      const tick = () => {
        if (left <= 0) { again(); return; }
        const at = new Date(Date.now() + left * 1000).toLocaleTimeString();
        say(`${why} Try again in ${left} second${left === 1 ? '' : 's'} (at ${at}); the page will retry by itself.`, true);
        left -= 1;
        retryTimer = setTimeout(tick, 1000);
      };
      tick();
      return;
    }
    if (e.status === 0) { say(e.message, true); return; }
    say(`The API refused this search (${e.status}): ${e.message}`, true);
  }

  // ---- rendering ----
  function highlight(name, text) {
    const chars = Array.from(name), n = Array.from(text).length, t = text.toLowerCase();
    for (let i = 0; i + n <= chars.length; i++) {
      const part = chars.slice(i, i + n).join('');
      if (part.toLowerCase() === t) return [chars.slice(0, i).join(''), part, chars.slice(i + n).join('')];
    }
    return [name, '', ''];
  }
  function matchClass(name, text) {
    if (name.toLowerCase() === text.toLowerCase()) return 0;
    return highlight(name, text)[0] === '' && highlight(name, text)[1] ? 1 : 2;
  }
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v; else if (k === 'hidden') e.hidden = v; else e.setAttribute(k, v);
    }
    for (const k of kids) if (k !== null && k !== undefined && k !== '') e.append(k);
    return e;
  }
  function lookupURL(cat, id, st) {
    const p = LOOKUP[cat].replace('%', id);
    return API + p + (st.lang === 'en' ? '' : '?' + lang(st));
  }
  function resultItem(cat, id, name, text, st) {
    const [a, m, b] = highlight(name, text);
    return el('li', null, el('a', { class: 'r', href: lookupURL(cat, id, st), 'data-cat': cat, 'data-id': id },
      el('span', { class: 'n' }, a, m ? el('mark', null, m) : '', b), el('span', { class: 'id' }, String(id))));
  }
  function nameOf(map, id) { const n = map.get(id); return n ? n.name : '#' + id; }

  function show(st, got) {
    const text = st.q.trim();
    const groups = [];
    let total = 0, capped = false;
    for (const cat of CATS) {
      const ids = got.ids[cat];
      if (!ids || !ids.length) continue;
      total += ids.length;
      capped = capped || ids.length >= 500;
      const sec = el('section', { class: 'group', 'data-cat': cat, 'data-ids': ids.join(',') },
        el('h2', null, LABEL[cat] + ' ', el('span', { class: 'count' }, ids.length >= 500 ? ids.length + '+' : String(ids.length))));
      const ol = el('ol');
      ids.slice(0, SHOWN).forEach((id) => ol.append(resultItem(cat, id, nameOf(got.names, id), text, st)));
      sec.append(ol);
      if (ids.length > SHOWN) sec.append(el('button', { type: 'button', class: 'more' }, 'Show more'));
      groups.push([matchClass(nameOf(got.names, ids[0]), text), sec]);
    }
    groups.sort((a, b) => a[0] - b[0]);
    results.replaceChildren(...groups.map((g) => g[1]));
    shownKey = keyOf(st);
    say(groups.length
      ? `${total}${capped ? '+' : ''} ${total === 1 ? 'result' : 'results'} in ${groups.length} ${groups.length === 1 ? 'category' : 'categories'}.`
      : `Nothing matches “${text}”. Try fewer letters, or turn Strict off.`);
    apiA.href = API + searchPath(st);
    apiA.textContent = 'GET ' + API + readable(searchPath(st));
    apiP.hidden = false;
    document.title = text + ' · gds search';
    painted(got.started);
  }
  // painted tells measurements when the results reached the screen: after
  // the next frame has been drawn.
  function painted(started) {
    requestAnimationFrame(() => setTimeout(() => {
      document.dispatchEvent(new CustomEvent('gds:painted', { detail: { started, painted: performance.now() } }));
    }, 0));
  }

  async function showMore(btn) {
    const sec = btn.closest('.group'), cat = sec.dataset.cat;
    const ids = sec.dataset.ids.split(',').map(Number), ol = $('ol', sec);
    const have = ol.children.length, next = ids.slice(have, have + MORE);
    btn.disabled = true;
    try {
      const st = current;
      const got = await names(next, st, new AbortController().signal);
      next.forEach((id) => ol.append(resultItem(cat, id, nameOf(got, id), st.q.trim(), st)));
      if (have + next.length >= ids.length) btn.remove();
    } catch (e) {
      failed(e, current);
    } finally {
      btn.disabled = false;
    }
  }

  // ---- details ----
  const ATTRS = {
    4: 'Mass', 6: 'Activation cost', 9: 'Structure hitpoints', 11: 'Powergrid output', 30: 'Powergrid usage',
    37: 'Max velocity', 38: 'Capacity', 48: 'CPU output', 50: 'CPU usage', 51: 'Rate of fire', 54: 'Optimal range',
    64: 'Damage multiplier', 158: 'Falloff', 161: 'Volume', 162: 'Radius', 263: 'Shield capacity', 265: 'Armor hitpoints',
    422: 'Tech level', 633: 'Meta level',
  };
  const SKILLS = [[182, 277], [183, 278], [184, 279]];
  let detailCtrl = null;

  function row(dl, label, value) {
    if (value === undefined || value === null || value === '') return;
    dl.append(el('dt', null, label), el('dd', null, value));
  }
  function ref(n, id, st) {
    if (!id) return null;
    const name = n.get(id);
    if (!name || !LOOKUP[name.category]) return '#' + id;
    return el('a', { class: 'ref', href: lookupURL(name.category, id, st), 'data-cat': name.category, 'data-id': id }, name.name);
  }
  const num = (v, d) => (typeof v === 'number' ? v.toLocaleString('en', { maximumFractionDigits: d === undefined ? 2 : d }) : v);
  const day = (v) => (v ? String(v).slice(0, 10) : v);
  const plain = (s) => (s || '').replace(/<br\s*\/?>/gi, '\n').replace(/<[^>]*>/g, '');

  async function openDetail(cat, id, how) {
    const st = { ...current, item: cat + ':' + id };
    current = st;
    if (how !== 'pop') record(st, 'item');
    $$('.r.sel').forEach((a) => a.classList.remove('sel'));
    const a = $(`.r[data-cat="${CSS.escape(cat)}"][data-id="${id}"]`);
    if (a) a.classList.add('sel');
    layout.classList.add('open');
    detail.hidden = false;
    detail.replaceChildren(el('p', { class: 'kind' }, 'Loading…'));
    if (detailCtrl) detailCtrl.abort();
    const c = new AbortController();
    detailCtrl = c;
    const sources = [];
    const get = async (path) => {
      const p = path + (path.includes('?') ? '&' : '?') + lang(st);
      sources.push('GET ' + API + p);
      return call(p, { signal: c.signal });
    };
    try {
      const d = await describe(cat, id, st, get);
      const ids = d.refs.filter(Boolean);
      let n = new Map();
      if (ids.length) {
        const u = [...new Set(ids)];
        sources.push(`POST ${API}/universe/names/?${lang(st)} [${u.slice(0, 8).join(',')}${u.length > 8 ? `,… ${u.length} IDs` : ''}]`);
        n = await names(ids, st, c.signal);
      }
      if (detailCtrl !== c) return;
      const dl = el('dl');
      d.rows(dl, n);
      const box = [
        el('button', { type: 'button', class: 'close', 'aria-label': 'Close details' }, 'Close'),
        el('h2', null, d.name), el('p', { class: 'kind' }, `${LABEL[cat] ? LABEL[cat].replace(/s$/, '') : cat} · ${id}`),
      ];
      if (d.desc) box.push(el('p', { class: 'desc' }, plain(d.desc)));
      box.push(dl);
      if (d.after) d.after(box, n);
      box.push(el('h3', null, 'From the API'));
      sources.forEach((s) => {
        const [verb, path] = s.split(' ');
        box.push(el('p', { class: 'src' }, verb === 'GET' ? el('a', { href: path }, s) : s));
      });
      detail.replaceChildren(...box);
      // On a phone the details sit above the results: bring them in view.
      if (how !== 'pop' && matchMedia('(max-width: 760px)').matches) detail.scrollIntoView({ block: 'start' });
    } catch (e) {
      if (e.name === 'AbortError') return;
      detail.replaceChildren(el('p', { class: 'error' }, e.status ? `The API answered ${e.status}: ${e.message}` : e.message));
    }
  }

  // describe fetches what the API knows of one result: its name, rows and
  // the IDs whose names the rows show.
  async function describe(cat, id, st, get) {
    switch (cat) {
      case 'inventory_type': {
        const t = await get(`/universe/types/${id}/`);
        const attrs = new Map((t.dogma_attributes || []).map((x) => [x.attribute_id, x.value]));
        const skills = SKILLS.filter(([s]) => attrs.has(s)).map(([s, l]) => [attrs.get(s), attrs.get(l)]);
        return {
          name: t.name, desc: t.description, refs: skills.map((s) => s[0]),
          rows(dl) {
            row(dl, 'Group', t.group_id); row(dl, 'Volume', t.volume !== undefined ? num(t.volume) + ' m³' : undefined);
            row(dl, 'Mass', t.mass !== undefined ? num(t.mass) + ' kg' : undefined);
            row(dl, 'Capacity', t.capacity ? num(t.capacity) + ' m³' : undefined);
            row(dl, 'Portion size', t.portion_size); row(dl, 'Published', t.published ? 'yes' : 'no');
          },
          after(box, n) {
            const known = [...attrs].filter(([k]) => ATTRS[k]).slice(0, 12);
            if (known.length || skills.length) {
              const dl = el('dl');
              skills.forEach(([s, l]) => row(dl, 'Requires', el('span', null, ref(n, s, st), l ? ` level ${l}` : '')));
              known.forEach(([k, v]) => row(dl, ATTRS[k], num(v)));
              box.push(el('h3', null, `Dogma attributes (${attrs.size})`), dl);
            }
          },
        };
      }
      case 'solar_system': {
        const s = await get(`/universe/systems/${id}/`);
        const k = await get(`/universe/constellations/${s.constellation_id}/`);
        const r = await get(`/universe/regions/${k.region_id}/`);
        const stations = (s.stations || []).slice(0, 25);
        return {
          name: s.name, refs: [s.constellation_id, k.region_id, ...stations],
          rows(dl, n) {
            row(dl, 'Security', num(s.security_status, 1) + (s.security_class ? ` (class ${s.security_class})` : ''));
            row(dl, 'Constellation', ref(n, s.constellation_id, st)); row(dl, 'Region', ref(n, k.region_id, st) || r.name);
            row(dl, 'Stations', String((s.stations || []).length));
          },
          after(box, n) { list(box, 'Stations', stations, n, st); },
        };
      }
      case 'station': {
        const s = await get(`/universe/stations/${id}/`);
        return {
          // The station's type is left out of the names call: station
          // types are not always among a snapshot's types, and one unknown
          // ID fails the whole call.
          name: s.name, refs: [s.system_id, s.owner],
          rows(dl, n) {
            row(dl, 'System', ref(n, s.system_id, st));
            row(dl, 'Type', el('a', { href: lookupURL('inventory_type', s.type_id, st) }, String(s.type_id)));
            row(dl, 'Owner', ref(n, s.owner, st));
            row(dl, 'Max ship volume', num(s.max_dockable_ship_volume) + ' m³');
            row(dl, 'Reprocessing', `${num(s.reprocessing_efficiency * 100)}% (station takes ${num(s.reprocessing_stations_take * 100)}%)`);
            row(dl, 'Office rent', num(s.office_rental_cost) + ' ISK'); row(dl, 'Services', (s.services || []).join(', '));
          },
        };
      }
      case 'corporation': {
        const c = await get(`/corporations/${id}/`);
        return {
          name: c.name, desc: c.description, refs: [c.alliance_id, c.ceo_id, c.home_station_id, c.faction_id],
          rows(dl, n) {
            row(dl, 'Ticker', `[${c.ticker}]`); row(dl, 'Alliance', c.alliance_id ? ref(n, c.alliance_id, st) : 'none');
            row(dl, 'Members', num(c.member_count)); row(dl, 'CEO', ref(n, c.ceo_id, st));
            row(dl, 'Faction', ref(n, c.faction_id, st)); row(dl, 'Home station', ref(n, c.home_station_id, st));
            row(dl, 'Tax rate', num(c.tax_rate * 100) + '%'); row(dl, 'Founded', day(c.date_founded));
          },
        };
      }
      case 'alliance': {
        const a = await get(`/alliances/${id}/`);
        return {
          name: a.name, refs: [a.executor_corporation_id, a.creator_corporation_id, a.creator_id, a.faction_id],
          rows(dl, n) {
            row(dl, 'Ticker', `<${a.ticker}>`); row(dl, 'Executor', ref(n, a.executor_corporation_id, st));
            row(dl, 'Founded by', ref(n, a.creator_corporation_id, st)); row(dl, 'Creator', ref(n, a.creator_id, st));
            row(dl, 'Faction', ref(n, a.faction_id, st)); row(dl, 'Founded', day(a.date_founded));
          },
        };
      }
      case 'agent': case 'character': {
        const c = await get(`/characters/${id}/`);
        return {
          name: c.name, desc: c.description, refs: [c.corporation_id, c.alliance_id, c.faction_id],
          rows(dl, n) {
            row(dl, 'Corporation', ref(n, c.corporation_id, st)); row(dl, 'Alliance', ref(n, c.alliance_id, st));
            row(dl, 'Faction', ref(n, c.faction_id, st)); row(dl, 'Title', c.title);
            row(dl, 'Security status', c.security_status !== undefined ? num(c.security_status, 1) : undefined);
            row(dl, 'Born', day(c.birthday));
          },
        };
      }
      case 'constellation': {
        const k = await get(`/universe/constellations/${id}/`);
        return {
          name: k.name, refs: [k.region_id, ...k.systems.slice(0, 25)],
          rows(dl, n) { row(dl, 'Region', ref(n, k.region_id, st)); row(dl, 'Systems', String(k.systems.length)); },
          after(box, n) { list(box, 'Systems', k.systems.slice(0, 25), n, st); },
        };
      }
      case 'region': {
        const r = await get(`/universe/regions/${id}/`);
        return {
          name: r.name, desc: r.description, refs: r.constellations.slice(0, 25),
          rows(dl) { row(dl, 'Constellations', String(r.constellations.length)); },
          after(box, n) { list(box, 'Constellations', r.constellations.slice(0, 25), n, st); },
        };
      }
      case 'faction': {
        const f = (await get('/universe/factions/')).find((x) => x.faction_id === id);
        if (!f) throw new APIError(404, 'Faction not found', 0);
        return {
          name: f.name, desc: f.description, refs: [f.corporation_id, f.militia_corporation_id, f.solar_system_id],
          rows(dl, n) {
            row(dl, 'Corporation', ref(n, f.corporation_id, st)); row(dl, 'Militia', ref(n, f.militia_corporation_id, st));
            row(dl, 'Home system', ref(n, f.solar_system_id, st)); row(dl, 'Stations', num(f.station_count));
          },
        };
      }
    }
    throw new APIError(0, 'Nothing to show for a ' + cat, 0);
  }
  function list(box, title, ids, n, st) {
    if (!ids.length) return;
    const ul = el('ul');
    ids.forEach((id) => ul.append(el('li', null, ref(n, id, st))));
    box.push(el('h3', null, title), ul);
  }
  function closeDetail(how) {
    if (detailCtrl) detailCtrl.abort();
    detailCtrl = null;
    detail.hidden = true;
    detail.replaceChildren();
    layout.classList.remove('open');
    const sel = $('.r.sel');
    if (sel) sel.classList.remove('sel');
    current = { ...current, item: '' };
    if (how !== 'pop') record(current, 'item');
    return sel;
  }

  // ---- events ----
  function changed(how) {
    const st = fromForm();
    st.item = '';
    if (current.item) closeDetail('pop');
    current = st;
    clearTimeout(timer);
    if (how === 'typing') {
      timer = setTimeout(() => { record(st, 'typing'); run(st); }, DEBOUNCE);
    } else {
      record(st, how);
      run(st);
    }
  }
  q.addEventListener('input', () => changed('typing'));
  form.addEventListener('change', (e) => { if (e.target !== q) changed('toggle'); });
  form.addEventListener('submit', (e) => { e.preventDefault(); changed('submit'); });

  document.addEventListener('click', (e) => {
    const more = e.target.closest('button.more');
    if (more) { showMore(more); return; }
    if (e.target.closest('button.close')) { const s = closeDetail(); if (s) s.focus(); return; }
    const a = e.target.closest('a.r, a.ref');
    if (!a || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    if (a.classList.contains('r')) a.focus();
    openDetail(a.dataset.cat, Number(a.dataset.id));
  });

  document.addEventListener('keydown', (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const items = $$('#results a.r');
    const at = items.indexOf(document.activeElement);
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      if (document.activeElement !== q && at < 0) return;
      e.preventDefault();
      if (!items.length) return;
      if (e.key === 'ArrowDown') items[Math.min(at + 1, items.length - 1)].focus();
      else if (at <= 0) q.focus();
      else items[at - 1].focus();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      if (!detail.hidden) { const s = closeDetail(); (s || q).focus(); return; }
      q.value = '';
      q.focus();
      changed('clear');
    } else if (e.key === '/' && document.activeElement !== q && !/^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName)) {
      e.preventDefault();
      q.focus();
      q.select();
    }
  });

  window.addEventListener('popstate', () => {
    const st = fromURL();
    toForm(st);
    current = { ...st, item: '' };
    run(st).then(() => {
      if (st.item) {
        const [cat, id] = st.item.split(':');
        if (LOOKUP[cat] && Number(id) > 0) openDetail(cat, Number(id), 'pop');
      } else if (!detail.hidden) closeDetail('pop');
    });
  });

  // ---- start: adopt what the server rendered ----
  const st = fromURL();
  current = { ...st, item: '' };
  if (results.children.length || status.classList.contains('error')) shownKey = keyOf(st);
  if (q.value !== st.q) run(fromForm()); // the browser restored a different text
  $$('button.more').forEach((b) => { b.hidden = false; });
  q.focus();
  q.setSelectionRange(q.value.length, q.value.length);
  if (st.item) {
    const [cat, id] = st.item.split(':');
    if (LOOKUP[cat] && Number(id) > 0) openDetail(cat, Number(id), 'pop');
  }
})();
