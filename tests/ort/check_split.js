#!/usr/bin/env node
// Runs an ONNX model and its autoshard splits (DIR/manifest.json) in
// onnxruntime on the same random inputs, chains each split's stages as its
// manifest says, and compares every output of the model: exact for integers,
// booleans and strings; |got - want| <= atol + rtol * |want| for floats. The
// model runs once for all the splits given.
//
// Usage: node check_split.js MODEL.onnx SPLIT_DIR... [options]
//   --dim NAME=V      value of the symbolic dim NAME (repeatable)
//   --shape NAME=D,D  the full shape of input NAME (repeatable)
//   --default-dim V   value of every other symbolic or unknown dim (1)
//   --value NAME=V    fill input NAME with V instead of random values
//   --int-max N       random integers are drawn from [0, N) (4)
//   --seed N          seed of the random inputs (1)
//   --rtol R --atol A tolerances for floats (1e-4, 1e-5)
//   --graph-optimization LEVEL  onnxruntime's graph optimizations for the
//                     model and the stages: all (default), extended, basic or
//                     disabled. Below "extended" onnxruntime fuses no
//                     QuantizeLinear/DequantizeLinear pairs into integer
//                     kernels; a stage boundary between such a pair keeps
//                     the float path there, which rounds differently.
//   --json            print one JSON object per split instead of text
// Exit: 0 every output matches; 1 a mismatch or a stage that does not run;
// 2 bad usage; 3 onnxruntime cannot run the original model (reason printed).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

function usage(msg) {
  console.error(`check_split: ${msg}\nusage: node check_split.js MODEL.onnx SPLIT_DIR... ` +
                '[--dim NAME=V]... [--shape NAME=D,D,...]... [--default-dim V] [--value NAME=V]... [--int-max N] ' +
                '[--seed N] [--rtol R] [--atol A] [--graph-optimization LEVEL] [--json]');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { dims: {}, shapes: {}, values: {}, defaultDim: 1, intMax: 4, seed: 1,
              rtol: 1e-4, atol: 1e-5, optimization: 'all', json: false, positional: [] };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const next = () => { if (i + 1 >= argv.length) usage(`${a} needs a value`); return argv[++i]; };
    const pair = (s) => {
      const at = s.lastIndexOf('=');
      if (at <= 0) usage(`expected NAME=V, got '${s}'`);
      return [s.slice(0, at), Number(s.slice(at + 1))];
    };
    if (a === '--dim') { const [k, v] = pair(next()); o.dims[k] = v; }
    else if (a === '--value') { const [k, v] = pair(next()); o.values[k] = v; }
    else if (a === '--shape') {
      const s = next();
      const at = s.lastIndexOf('=');
      if (at <= 0) usage(`expected NAME=D,D,..., got '${s}'`);
      o.shapes[s.slice(0, at)] = s.slice(at + 1).split(',').filter((d) => d !== '').map(Number);
    }
    else if (a === '--default-dim') o.defaultDim = Number(next());
    else if (a === '--int-max') o.intMax = Number(next());
    else if (a === '--seed') o.seed = Number(next());
    else if (a === '--rtol') o.rtol = Number(next());
    else if (a === '--atol') o.atol = Number(next());
    else if (a === '--graph-optimization') {
      o.optimization = next();
      if (!['all', 'extended', 'basic', 'disabled'].includes(o.optimization)) usage(`unknown level ${o.optimization}`);
    }
    else if (a === '--json') o.json = true;
    else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else o.positional.push(a);
  }
  if (o.positional.length < 2) usage('expected MODEL.onnx and SPLIT_DIR...');
  return o;
}

// mulberry32: a small seeded generator, uniform in [0, 1).
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// IEEE half-precision bits of a float (round to nearest even).
function toHalf(f) {
  const buf = new DataView(new ArrayBuffer(4));
  buf.setFloat32(0, f);
  const x = buf.getUint32(0);
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  let mant = x & 0x7fffff;
  if (exp <= 0) return sign;  // |f| < 2^-14 becomes 0 (inputs are in [-1, 1))
  if (exp >= 31) return sign | 0x7c00;
  let h = sign | (exp << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1))) h += 1;
  return h;
}

const INT_TYPES = {
  int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array,
  int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
};

function makeTensor(spec, opts, rnd) {
  const shape = opts.shapes[spec.name] || spec.dims.map((d) => {
    if (/^[0-9]+$/.test(d)) return Number(d);
    if (d in opts.dims) return opts.dims[d];
    return opts.defaultDim;
  });
  const n = shape.reduce((a, b) => a * b, 1);
  const fixed = opts.values[spec.name];
  const t = spec.type;
  let data;
  if (t === 'float32' || t === 'float64') {
    data = new (t === 'float32' ? Float32Array : Float64Array)(n);
    for (let i = 0; i < n; ++i) data[i] = fixed !== undefined ? fixed : rnd() * 2 - 1;
  } else if (t === 'float16') {
    data = new Uint16Array(n);
    for (let i = 0; i < n; ++i) data[i] = toHalf(fixed !== undefined ? fixed : rnd() * 2 - 1);
  } else if (t in INT_TYPES) {
    data = new INT_TYPES[t](n);
    const big = t === 'int64' || t === 'uint64';
    for (let i = 0; i < n; ++i) {
      const v = fixed !== undefined ? fixed : Math.floor(rnd() * opts.intMax);
      data[i] = big ? BigInt(v) : v;
    }
  } else if (t === 'bool') {
    data = new Uint8Array(n);
    for (let i = 0; i < n; ++i) data[i] = fixed !== undefined ? (fixed ? 1 : 0) : (rnd() < 0.5 ? 1 : 0);
  } else if (t === 'string') {
    const words = ['a', 'b', 'c', 'male', 'female', '1', '2', '3', 'S', 'C', 'Q'];
    data = [];
    for (let i = 0; i < n; ++i) data.push(words[Math.floor(rnd() * words.length)]);
  } else {
    throw new Error(`input '${spec.name}' has type ${t}, which this script cannot make`);
  }
  return new ort.Tensor(t, data, shape);
}

const FLOAT_TYPES = new Set(['float32', 'float64', 'float16']);

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >>> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

// {ok, maxAbs, reason}. Integers (BigInt for int64 and uint64), booleans and
// strings must be equal; floats within atol + rtol * |want|.
function compare(want, got, opts) {
  if (!got) return { ok: false, maxAbs: null, reason: 'missing' };
  if (want.type !== got.type) return { ok: false, maxAbs: null, reason: `type ${got.type}, want ${want.type}` };
  if (want.dims.join(',') !== got.dims.join(',')) {
    return { ok: false, maxAbs: null, reason: `shape [${got.dims}], want [${want.dims}]` };
  }
  const isFloat = FLOAT_TYPES.has(want.type);
  const conv = want.type === 'float16' ? halfToFloat : (v) => v;
  let maxAbs = 0;
  let bad = 0;
  for (let i = 0; i < want.data.length; ++i) {
    const a = want.data[i];
    const b = got.data[i];
    if (!isFloat) {
      if (a === b) continue;
      ++bad;
      // The size of the difference is only reported: exactness is a === b.
      if (typeof a === 'bigint') maxAbs = Math.max(maxAbs, Number(a > b ? a - b : b - a));
      else if (typeof a === 'number') maxAbs = Math.max(maxAbs, Math.abs(a - b));
      continue;
    }
    const x = conv(a);
    const y = conv(b);
    if (Number.isNaN(x) || Number.isNaN(y)) { if (!(Number.isNaN(x) && Number.isNaN(y))) ++bad; continue; }
    if (x === y) continue;
    const d = Math.abs(x - y);
    if (!Number.isFinite(d)) { ++bad; maxAbs = Infinity; continue; }
    maxAbs = Math.max(maxAbs, d);
    if (d > opts.atol + opts.rtol * Math.abs(x)) ++bad;
  }
  return { ok: bad === 0, maxAbs, reason: bad ? `${bad} of ${want.data.length} elements differ` : '' };
}

function sessionOptions(opts) {
  return { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3,
           graphOptimizationLevel: opts.optimization };
}

// Chains the stages of the split in `dir` on `feeds` and compares with
// `want` (the original's outputs). Returns the result object.
async function checkSplit(modelPath, dir, manifest, feeds, want, notTensor, opts) {
  const result = { model: modelPath, split: dir, stages: manifest.stages.length, outputs: [], ok: true };
  const values = {};  // "<stage>:<name>" -> tensor
  for (const stage of manifest.stages) {
    const stageFeeds = {};
    for (const input of stage.inputs) {
      const v = input.source === 'graph_input' ? feeds[input.name] : values[input.source];
      if (v === undefined) {
        result.ok = false;
        result.stage_error = `stage ${stage.stage}: input '${input.name}' from '${input.source}' was not computed`;
        return result;
      }
      stageFeeds[input.name] = v;
    }
    try {
      const session = await ort.InferenceSession.create(path.join(dir, stage.file), sessionOptions(opts));
      // A stage whose outputs are all model outputs that are not tensors
      // (onnxruntime-node returns tensors only) is loaded, not run.
      const fetch = stage.outputs.map((o) => o.name).filter((n) => !notTensor.has(n));
      if (fetch.length > 0) {
        const out = await session.run(stageFeeds, fetch);
        for (const name of fetch) values[`${stage.stage}:${name}`] = out[name];
      }
    } catch (e) {
      result.ok = false;
      result.stage_error = `stage ${stage.stage} (${stage.file}): ${String(e.message || e).split('\n')[0]}`;
      return result;
    }
  }
  for (const output of manifest.outputs) {
    if (notTensor.has(output.name)) {
      result.outputs.push({ name: output.name, ok: true, max_abs: null,
                            note: `not compared: ${output.type} (onnxruntime-node returns tensors only)` });
      continue;
    }
    const got = output.source === 'graph_input' ? feeds[output.name] : values[output.source];
    const c = compare(want[output.name], got, opts);
    result.outputs.push({ name: output.name, dims: want[output.name].dims, ok: c.ok,
                          max_abs: c.maxAbs, note: c.reason });
    if (!c.ok) result.ok = false;
  }
  return result;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const [modelPath, ...dirs] = opts.positional;
  const manifests = dirs.map((d) => JSON.parse(fs.readFileSync(path.join(d, 'manifest.json'), 'utf8')));
  const inputs = JSON.stringify(manifests[0].inputs);
  if (manifests.some((m) => JSON.stringify(m.inputs) !== inputs)) usage('the splits are of models with different inputs');
  const rnd = random(opts.seed);
  const feeds = {};
  for (const spec of manifests[0].inputs) feeds[spec.name] = makeTensor(spec, opts, rnd);

  // The original, once; outputs onnxruntime-node cannot return (not
  // tensors) are listed, not compared.
  let want;
  const notTensor = new Set();
  try {
    const session = await ort.InferenceSession.create(modelPath, sessionOptions(opts));
    for (const m of session.outputMetadata || []) if (m.isTensor === false) notTensor.add(m.name);
    want = await session.run(feeds, session.outputNames.filter((n) => !notTensor.has(n)));
  } catch (e) {
    const error = String(e.message || e).split('\n')[0];
    for (let i = 0; i < dirs.length; ++i) {
      report({ model: modelPath, split: dirs[i], stages: manifests[i].stages.length, outputs: [],
               ok: false, original_error: error }, opts);
    }
    process.exitCode = 3;
    return;
  }
  let ok = true;
  for (let i = 0; i < dirs.length; ++i) {
    const result = await checkSplit(modelPath, dirs[i], manifests[i], feeds, want, notTensor, opts);
    report(result, opts);
    ok = ok && result.ok;
  }
  process.exitCode = ok ? 0 : 1;
}

function report(result, opts) {
  if (opts.json) {
    console.log(JSON.stringify(result));
    return;
  }
  if (result.original_error) console.log(`onnxruntime cannot run ${result.model}: ${result.original_error}`);
  if (result.stage_error) console.log(`FAIL ${result.stage_error}`);
  for (const o of result.outputs) {
    const dims = o.dims ? ` [${o.dims.join(',')}]` : '';
    console.log(`${o.ok ? 'ok  ' : 'FAIL'} ${o.name}${dims}: max abs difference ${o.max_abs}${o.note ? ` (${o.note})` : ''}`);
  }
  console.log(`${result.ok ? 'PASS' : 'FAIL'} ${result.split}: ${result.stages} stages of ${result.model}`);
}

if (require.main === module) {
  main().catch((e) => { console.error(`check_split: ${e.stack || e}`); process.exitCode = 1; });
} else {
  // compare for check_split_test.js; the inputs' makers for check_dims.js.
  module.exports = { compare, makeTensor, random, sessionOptions };
}
