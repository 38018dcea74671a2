#!/usr/bin/env node
// Runs a model made by expose_outputs.py (DIR/model.onnx, DIR/spec.json) in
// onnxruntime on random inputs at the spec's dims and prints one JSON
// object: {"ok": true, "outputs": {NAME: [dims], ...}} with the dims of
// every output it returned, or {"ok": false, "error": "..."} with
// onnxruntime's reason (its shape inference or a kernel refusing the dims,
// or an op it lacks). Issue 25, point 1.
//
// Usage: node check_dims.js DIR... [--value NAME=V]... [--int-max N] [--seed N]
// (--value fills input NAME with V; random integers are drawn from [0, N));
// one JSON line per DIR, in order. A spec's "values" ({NAME: V}) add to
// --value for its directory.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));
const { makeTensor, random, sessionOptions } = require('./check_split.js');

// One directory's run: {ok, outputs} or {ok: false, error}.
async function runOne(dir, opts) {
  const spec = JSON.parse(fs.readFileSync(path.join(dir, 'spec.json'), 'utf8'));
  const rnd = random(opts.seed);
  try {
    const feeds = {};
    for (const input of spec.inputs) feeds[input.name] = makeTensor(input, opts, rnd);
    const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'),
                                                      sessionOptions(opts));
    const tensors = new Set();
    for (const m of session.outputMetadata || []) if (m.isTensor !== false) tensors.add(m.name);
    const got = await session.run(feeds, session.outputNames.filter((n) => tensors.has(n)));
    const outputs = {};
    for (const [name, t] of Object.entries(got)) outputs[name] = Array.from(t.dims, Number);
    return { ok: true, outputs };
  } catch (e) {
    return { ok: false, error: String(e.message || e).split('\n')[0] };
  }
}

async function main() {
  const argv = process.argv.slice(2);
  const opts = { dims: {}, shapes: {}, values: {}, defaultDim: 1, intMax: 4, seed: 1,
                 optimization: 'all' };
  const dirs = [];
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--value') {
      const [k, v] = argv[++i].split('=');
      opts.values[k] = Number(v);
    } else if (a === '--int-max') opts.intMax = Number(argv[++i]);
    else if (a === '--seed') opts.seed = Number(argv[++i]);
    else dirs.push(a);
  }
  if (dirs.length === 0) { console.error('usage: node check_dims.js DIR... [--value NAME=V]...'); process.exit(2); }
  for (const dir of dirs) {
    // Per-directory values (expose_outputs.py's spec), over the command's.
    const spec = JSON.parse(fs.readFileSync(path.join(dir, 'spec.json'), 'utf8'));
    const own = { ...opts, values: { ...opts.values, ...(spec.values || {}) } };
    console.log(JSON.stringify(await runOne(dir, own)));
  }
}

main().catch((e) => { console.error(`check_dims: ${e.stack || e}`); process.exitCode = 1; });
