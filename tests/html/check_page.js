#!/usr/bin/env node
// Checks an autoshard --html page as headless Chromium rendered it
// (tests/html/browser_test.sh makes the inputs). Node's standard library
// only: no npm package.
//
//   node check_page.js --kind plan|inspect --page PAGE.html --dom DOM.html
//       --log CHROMIUM.log --json PLAN.json --png SHOT.png
//       [--max-bytes N] [--graph yes|no] [--max-boxes N]
//
// What it checks, each a line "ok ..." or "FAIL ...":
// - the browser logged no console message (no script error) and the page's
//   script ran (<html data-ready="yes"> in the DOM after scripts);
// - the page is self-contained (no src/href/url() to anything but #ids and
//   data:), and at most --max-bytes long;
// - every chart is there: memory, fullest tile, stage time and timeline
//   (plan) or memory, tile and op types (inspect), with one row per IPU;
//   bar widths proportional to the plan's values; 4 micro-batches per IPU;
// - every figure shown (data-field="PATH" data-value="V") equals the JSON's
//   value at PATH, and its text is that value as printed (to its decimals);
// - with --graph yes: an inlined Graphviz picture with one cluster and one
//   title per IPU, the titles left to right in IPU order, cut stubs of
//   both kinds, the zoom buttons and script, and at most --max-boxes boxes;
// - the screenshot is not blank: over 1% of its pixels are not background,
//   in more than 16 colours.
'use strict';
const fs = require('fs');
const zlib = require('zlib');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) {
  args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
}
let failures = 0;
function check(ok, what) {
  console.log((ok ? 'ok ' : 'FAIL ') + what);
  if (!ok) failures++;
}

const page = fs.readFileSync(args.page, 'utf8');
const dom = fs.readFileSync(args.dom, 'utf8');
const log = fs.readFileSync(args.log, 'utf8');
const json = JSON.parse(fs.readFileSync(args.json, 'utf8'));

// --- script errors, self-containment, size
const consoleLines = log.split('\n').filter((l) => /CONSOLE/.test(l));
check(consoleLines.length === 0,
      'no console message (script error) in the browser log' +
          (consoleLines.length ? ': ' + consoleLines.join(' | ') : ''));
check(/<html[^>]*data-ready="yes"/.test(dom), "the page's script ran");
const external = page.match(
    /\b(?:src|href)\s*=\s*"(?!#|data:)[^"]*"|url\((?!#|data:)[^)]*\)|@import/g);
check(external === null,
      'no external reference' + (external ? ': ' + external.join(' ') : ''));
const maxBytes = Number(args['max-bytes'] || 3000000);
check(page.length <= maxBytes, `page is ${page.length} bytes (<= ${maxBytes})`);

// --- the charts
function svgById(id) {
  const m = dom.match(new RegExp(`<svg[^>]*id="${id}"[\\s\\S]*?</svg>`));
  return m ? m[0] : null;
}
function attrs(tag) {
  const out = {};
  for (const m of tag.matchAll(/([\w:-]+)="([^"]*)"/g)) out[m[1]] = m[2];
  return out;
}
function rects(svg) {
  return [...svg.matchAll(/<rect\b[^>]*>/g)].map((m) => attrs(m[0]));
}
const n = (v) => Number(v);

// The widths of the segments of rows x series are value x (one scale).
// With rowTotals, valuesOf(row) is the length of the row's segments together.
function checkBars(id, rows, valuesOf, rowTotals) {
  const svg = svgById(id);
  check(svg !== null, `chart ${id} is on the page`);
  if (!svg) return;
  let bars = rects(svg).filter((r) => r['data-row'] !== undefined);
  const seen = new Set(bars.map((r) => r['data-row']));
  check(seen.size === rows, `${id}: ${seen.size} rows (expected ${rows})`);
  if (rowTotals) {
    const width = {};
    for (const r of bars) width[r['data-row']] = (width[r['data-row']] || 0) + n(r.width);
    bars = Object.keys(width).map((row) => ({'data-row': row, 'data-series': 0,
                                             width: width[row]}));
  }
  let scale = null, worst = 0;
  for (const r of bars) {
    const v = valuesOf(n(r['data-row']), n(r['data-series']));
    if (v > 0 && (scale === null || v > scale.v)) scale = {v, w: n(r.width)};
  }
  if (scale === null) return;
  for (const r of bars) {
    const v = valuesOf(n(r['data-row']), n(r['data-series']));
    worst = Math.max(worst, Math.abs(n(r.width) - (v * scale.w) / scale.v));
  }
  check(worst <= 0.02, `${id}: bar widths proportional to the values ` +
                           `(worst ${worst.toFixed(4)} px off)`);
}

const kinds = ['weight_bytes', 'code_bytes', 'exchange_bytes',
               'activation_bytes', 'temporary_bytes'];
let memories;
if (args.kind === 'plan') {
  memories = json.ipus.map((ipu) => ipu.memory);
  // Compute and copies split each row; the row's length is the stage time.
  checkBars('stage-chart', json.ipus.length,
            (row) => json.ipus[row].stage_time_s, /*rowTotals=*/true);
  const timeline = svgById('timeline-chart');
  check(timeline !== null, 'chart timeline-chart is on the page');
  if (timeline) {
    const boxes = rects(timeline).filter((r) => r['data-micro-batch']);
    // A plan whose stages outnumber its IPUs (a stage back on IPU 0) has
    // 4 boxes per stage, each on its stage's IPU.
    const layout = json.stages || {};
    const stageIpus = (layout.num_stages || 0) > json.ipus.length ?
        layout.stage_ipus : null;
    const perRow = stageIpus ? stageIpus.length : json.ipus.length;
    check(boxes.length === 4 * perRow,
          `timeline: ${boxes.length} micro-batch boxes (4 per ` +
              `${stageIpus ? 'stage' : 'IPU'})`);
    if (stageIpus) {
      const off = boxes.filter(
          (r) => n(r['data-ipu']) !== stageIpus[n(r['data-stage'])]);
      check(off.length === 0,
            `timeline: every stage's boxes on its IPU's row ` +
                `(${off.length} not)`);
    }
  }
  const cutRows = (dom.match(/<table[^>]*id="cut-table"[\s\S]*?<\/table>/) ||
                   [''])[0].match(/<tr>/g);
  const expected = Math.min(json.cut_tensors.length, 200);
  check((cutRows ? cutRows.length - 1 : 0) === expected,
        `cut tensor table: ${expected} rows`);
} else {
  memories = [json.single_ipu_memory];
  checkBars('op-type-chart', Math.min(json.op_types.length, 20),
            (row) => json.op_types[row].flops);
}
checkBars('memory-chart', memories.length,
          (row, s) => n(memories[row][kinds[s]]));
checkBars('tile-chart', memories.length,
          (row) => n(memories[row].max_tile_bytes));

// --- figures: data-value equals the JSON's, the text shows that value
const units = {B: 1, kB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, PB: 1e15,
               FLOPs: 1, kFLOPs: 1e3, MFLOPs: 1e6, GFLOPs: 1e9,
               TFLOPs: 1e12, PFLOPs: 1e15, s: 1, ms: 1e-3, us: 1e-6, '%': 1};
function shown(text) {  // [value, tolerance] of "12.34 MB", "1.5%", "7"
  const m = text.trim().match(/^(-?\d+(?:\.(\d+))?)(?:e([+-]?\d+))?\s*(\S*)$/);
  if (!m) return null;
  const unit = m[4] === '' ? 1 : units[m[4]];
  if (unit === undefined) return null;
  const exp = m[3] ? Math.pow(10, Number(m[3])) : 1;
  const decimals = m[2] ? m[2].length : 0;
  return [Number(m[1]) * exp * unit,
          0.5 * Math.pow(10, -decimals) * exp * unit * (1 + 1e-9)];
}
function at(path) {
  let v = json;
  for (const key of path.split('.')) {
    if (v === undefined) return undefined;
    v = v[key];
  }
  return v;
}
const figures = [...dom.matchAll(
    /<span data-field="([^"]*)" data-value="([^"]*)">([^<]*)<\/span>/g)];
let wrongValue = [], wrongText = [];
for (const [, path, value, text] of figures) {
  const want = at(path);
  const same = typeof want === 'string' ? want === value
                                        : Math.abs(n(value) - want) <=
                                              1e-12 * Math.abs(want);
  if (want === undefined || !same) wrongValue.push(`${path}=${value} (${want})`);
  const s = shown(text);
  if (s === null || Math.abs(s[0] - n(value)) > s[1] + 1e-300) {
    wrongText.push(`${path}: "${text}" for ${value}`);
  }
}
const minFigures = args.kind === 'plan' ? 13 * json.ipus.length + 5 : 10;
check(figures.length >= minFigures,
      `${figures.length} figures tagged (at least ${minFigures})`);
check(wrongValue.length === 0, 'every figure equals the JSON\'s' +
                                   (wrongValue.length ? ': ' + wrongValue.slice(0, 5) : ''));
check(wrongText.length === 0, 'every figure\'s text shows its value' +
                                  (wrongText.length ? ': ' + wrongText.slice(0, 5) : ''));

// --- the graph picture
if (args.graph === 'yes') {
  const section = (dom.match(/<div class="graph"[^>]*>[\s\S]*?<\/svg>/) || [''])[0];
  const clusters = (section.match(/class="cluster"/g) || []).length;
  // Each IPU's title is a node too (<title>t0</title>...), not a box, and
  // so is each cut tensor's stub (o0, i0, ...).
  const titles = (section.match(/<title>t\d+<\/title>/g) || []).length;
  const stubs = (section.match(/<title>[oi]\d+<\/title>/g) || []).length;
  const boxes = (section.match(/class="node"/g) || []).length - titles - stubs;
  // Out-stubs group a sending box's tensors per receiving IPU and in-stubs
  // a reading box's per sending IPU, so the two kinds need not be as many.
  const outs = (section.match(/<title>o\d+<\/title>/g) || []).length;
  check(outs > 0 && stubs - outs > 0,
        `graph: ${outs} "to IPU" and ${stubs - outs} "from IPU" cut stubs`);
  check(clusters === json.ipus.length,
        `graph: ${clusters} clusters (one per IPU)`);
  check(titles === json.ipus.length, `graph: ${titles} IPU titles (one per IPU)`);
  // The titles left to right in IPU order (Graphviz's text x of each title).
  const xs = [];
  for (let d = 0; d < titles; ++d) {
    const m = section.match(new RegExp(
        `<title>t${d}</title>[\\s\\S]*?<text[^>]*x="([-\\d.]+)"`));
    xs.push(m ? Number(m[1]) : NaN);
  }
  check(xs.every((x, i) => i === 0 || x > xs[i - 1]),
        `graph: the IPUs go left to right in order (title x: ${xs.join(', ')})`);
  check(/<div class="graph"[^>]*data-zoom="fit"/.test(dom),
        'graph: the zoom script ran (data-zoom="fit")');
  check((dom.match(/<button data-zoom=/g) || []).length === 4,
        'graph: four zoom buttons');
  const maxBoxes = Number(args['max-boxes'] || 1e9);
  check(boxes > 0 && boxes <= maxBoxes, `graph: ${boxes} boxes (<= ${maxBoxes})`);
}

// --- the screenshot
function decodePng(file) {
  const buf = fs.readFileSync(file);
  let pos = 8, width = 0, height = 0, type = 0, depth = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const kind = buf.toString('ascii', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (kind === 'IHDR') {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4);
      depth = data[8]; type = data[9];
    } else if (kind === 'IDAT') {
      idat.push(data);
    }
    pos += 12 + len;
  }
  if (depth !== 8 || (type !== 2 && type !== 6)) throw new Error('PNG type');
  const bpp = type === 6 ? 4 : 3, stride = width * bpp;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const px = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const cur = raw[y * (stride + 1) + 1 + x];
      const a = x >= bpp ? px[y * stride + x - bpp] : 0;
      const b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= bpp && y > 0 ? px[(y - 1) * stride + x - bpp] : 0;
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b),
            pc = Math.abs(p - c);
      const pred = [0, a, b, (a + b) >> 1,
                    pa <= pb && pa <= pc ? a : pb <= pc ? b : c][f];
      px[y * stride + x] = (cur + pred) & 255;
    }
  }
  return {width, height, bpp, px};
}
const png = decodePng(args.png);
let ink = 0;
const colours = new Set();
for (let i = 0; i < png.width * png.height; i++) {
  const r = png.px[i * png.bpp], g = png.px[i * png.bpp + 1],
        b = png.px[i * png.bpp + 2];
  if (r < 240 || g < 240 || b < 240) ink++;
  if (colours.size < 1000) colours.add((r << 16) | (g << 8) | b);
}
const share = ink / (png.width * png.height);
check(share > 0.01 && colours.size > 16,
      `screenshot ${png.width}x${png.height}: ${(share * 100).toFixed(1)}% ` +
          `drawn, ${colours.size}${colours.size >= 1000 ? '+' : ''} colours`);

console.log(failures === 0 ? 'page checks passed' : `${failures} checks failed`);
process.exit(failures === 0 ? 0 : 1);
