#!/usr/bin/env node
// Checks one `reveal report` HTML page in headless Chromium (Debian's /usr/bin/chromium, driven
// by playwright-core; nothing is downloaded). The page contract it checks:
//   - svg.chart elements, at least one, each with a non-zero box and drawn content (a path with
//     a non-empty d, a polyline with points, or a rect with width > 0); #timeline and #heatmap
//     among them;
//   - section.incident cards, each with its own svg.chart small multiples;
//   - table#channels with th headers: clicking th[data-key=peak] (else the first th) sets
//     aria-sort and orders the rows by that column's td data-value;
//   - no console error, no uncaught page error, no request but the file itself.
// It prints one PASS/FAIL line per check, saves a full-page PNG and exits 1 on any failure
// (2 on bad usage or when the browser cannot be started).
//
// usage: node browser_check.mjs PAGE.html --screenshot OUT.png
//          [--expect-incidents N | --min-incidents N] [--expect-subsystem NAME] [--no-table]
// env:   REVEAL_CHROMIUM  the browser binary (default /usr/bin/chromium)
import { parseArgs } from 'node:util';
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const usage = 'usage: node browser_check.mjs PAGE.html --screenshot OUT.png ' +
  '[--expect-incidents N | --min-incidents N] [--expect-subsystem NAME] [--no-table]';
let opts;
try {
  opts = parseArgs({
    allowPositionals: true,
    options: {
      screenshot: { type: 'string' },
      'expect-incidents': { type: 'string' },
      'min-incidents': { type: 'string' },
      'expect-subsystem': { type: 'string' },
      'no-table': { type: 'boolean', default: false },
    },
  });
} catch (e) {
  console.error(`${e.message}\n${usage}`);
  process.exit(2);
}
const { values: o, positionals } = opts;
const count = (s) => (s === undefined ? undefined : /^\d+$/.test(s) ? Number(s) : NaN);
const expectN = count(o['expect-incidents']);
const minN = count(o['min-incidents']);
if (positionals.length !== 1 || !o.screenshot || Number.isNaN(expectN) || Number.isNaN(minN) ||
    (expectN !== undefined && minN !== undefined)) {
  console.error(usage);
  process.exit(2);
}
const page_path = resolve(positionals[0]);
if (!existsSync(page_path)) {
  console.error(`FAIL page: ${page_path} does not exist`);
  process.exit(1);
}

let failures = 0;
const check = (name, ok, why = '') => {
  console.log(ok ? `PASS ${name}` : `FAIL ${name}: ${why}`);
  if (!ok) failures++;
};

let chromium;
try {
  ({ chromium } = await import('playwright-core'));
} catch (e) {
  console.error(`FAIL browser: playwright-core not installed (run scripts/browser_deps.sh): ${e.message}`);
  process.exit(2);
}
const executablePath = process.env.REVEAL_CHROMIUM || '/usr/bin/chromium';
let browser;
try {
  browser = await chromium.launch({
    executablePath,
    headless: true,
    chromiumSandbox: false,  // --no-sandbox: root in CI and containers has no usable sandbox
    args: ['--disable-gpu', '--disable-dev-shm-usage'],
    timeout: 60_000,
  });
} catch (e) {
  console.error(`FAIL browser: cannot launch ${executablePath} (Debian package chromium, ` +
    `scripts/setup.sh): ${e.message.split('\n').slice(0, 8).join('\n')}`);
  process.exit(2);
}

try {
  const url = pathToFileURL(page_path).href;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console.error: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
  page.on('request', (r) => { if (r.url() !== url && !/^(data|blob|about):/.test(r.url())) requests.push(r.url()); });
  // Nothing may leave the machine, even when the check is about to fail for it.
  await context.route(/^(https?|wss?|ftp):/, (route) => route.abort());

  const response = await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
  check('page loads', response === null || response.ok(), `status ${response?.status()}`);
  await page.waitForTimeout(250);  // let timers and async handlers of the inline script run

  // Charts: every svg.chart is laid out and draws something.
  const charts = await page.$$eval('svg.chart', (svgs) => svgs.map((svg, i) => {
    const box = svg.getBoundingClientRect();
    const drawn = [...svg.querySelectorAll('path, polyline, rect')].filter((el) => {
      if (el.tagName === 'path') return (el.getAttribute('d') || '').trim() !== '';
      if (el.tagName === 'polyline') return (el.getAttribute('points') || '').trim() !== '';
      return el.width.baseVal.value > 0;
    }).length;
    return { name: svg.id ? `#${svg.id}` : `[${i}]`, w: box.width, h: box.height, drawn };
  }));
  check('charts present', charts.length > 0, 'no svg.chart in the page');
  for (const c of charts) {
    check(`chart ${c.name} drawn`, c.w > 0 && c.h > 0 && c.drawn > 0,
      `box ${c.w}x${c.h}, ${c.drawn} drawn path/polyline/rect elements`);
  }
  for (const id of ['timeline', 'heatmap']) {
    check(`chart #${id} present`, charts.some((c) => c.name === `#${id}`), `no svg.chart#${id}`);
  }

  // Incident cards, each with its own charts.
  const incidents = await page.$$eval('section.incident', (cards) => cards.map((s) => ({
    subsystem: s.dataset.subsystem || '', charts: s.querySelectorAll('svg.chart').length })));
  if (expectN !== undefined) {
    check(`incidents = ${expectN}`, incidents.length === expectN, `found ${incidents.length}`);
  }
  if (minN !== undefined) {
    check(`incidents >= ${minN}`, incidents.length >= minN, `found ${incidents.length}`);
  }
  incidents.forEach((s, i) => check(`incident ${i + 1} (${s.subsystem || '?'}) has charts`,
    s.charts > 0 && s.subsystem !== '', s.subsystem ? 'no svg.chart in the card' : 'no data-subsystem'));
  if (o['expect-subsystem']) {
    const want = o['expect-subsystem'];
    check(`incident subsystem ${want}`, incidents.some((s) => s.subsystem === want),
      `subsystems: [${incidents.map((s) => s.subsystem).join(', ')}]`);
  }

  if (!o['no-table']) await checkTable(page);

  check('no console or page errors', errors.length === 0, errors.slice(0, 5).join(' | '));
  check('no network requests', requests.length === 0, requests.slice(0, 5).join(' '));

  await page.screenshot({ path: o.screenshot, fullPage: true, timeout: 30_000 });
  const size = existsSync(o.screenshot) ? statSync(o.screenshot).size : 0;
  check('full-page screenshot', size > 0, `nothing written to ${o.screenshot}`);
  if (size > 0) console.log(`screenshot: ${resolve(o.screenshot)} (${size} bytes)`);
} catch (e) {
  check('page check', false, e.message.split('\n')[0]);
} finally {
  await browser.close();
}
console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);

// table#channels sorts on a header click: aria-sort is set and the rows follow it, by the
// column's td data-value (numbers when they all parse as numbers). Two clicks, so that a table
// already in the first click's order must still be seen to move.
async function checkTable(page) {
  const table = page.locator('table#channels');
  if ((await table.count()) !== 1) return check('channel table', false, 'no table#channels');
  const headers = table.locator('th');
  if ((await headers.count()) === 0) return check('channel table', false, 'no th headers');
  const peak = table.locator('th[data-key="peak"]');
  const th = (await peak.count()) > 0 ? peak.first() : headers.first();
  const key = (await th.getAttribute('data-key')) ?? (await th.textContent()).trim();
  const col = await th.evaluate((el) => el.cellIndex);
  const state = () => table.evaluate((t, col) => {
    const rows = [...t.querySelectorAll('tr')].filter((r) => r.querySelector('td'));
    return rows.map((r) => {
      const cell = r.cells[col];
      return { text: r.textContent.trim(), value: cell ? (cell.dataset.value ?? cell.textContent.trim()) : '' };
    });
  }, col);
  const before = await state();
  check('channel table has rows', before.length > 0, 'no data rows');
  if (before.length === 0) return;
  let moved = false;
  for (const click of [1, 2]) {
    await th.click();
    const sort = await th.getAttribute('aria-sort');
    const rows = await state();
    const name = `table sort by ${key} (click ${click})`;
    if (sort !== 'ascending' && sort !== 'descending') {
      return check(name, false, `aria-sort is ${JSON.stringify(sort)}`);
    }
    moved ||= rows.map((r) => r.text).join('\n') !== before.map((r) => r.text).join('\n');
    const vals = rows.map((r) => r.value);
    const numeric = vals.every((v) => v !== '' && Number.isFinite(Number(v)));
    const cmp = (a, b) => (numeric ? Number(a) - Number(b) : a.localeCompare(b));
    const bad = vals.findIndex((v, i) => i > 0 && (sort === 'ascending' ? cmp(vals[i - 1], v) > 0 : cmp(vals[i - 1], v) < 0));
    check(name, bad < 0, `aria-sort ${sort} but row ${bad + 1} (${vals[bad - 1]} then ${vals[bad]}) is out of order`);
  }
  const distinct = new Set(before.map((r) => r.value)).size > 1;
  check('table rows reordered', moved || !distinct, 'two header clicks left the row order unchanged');
}
