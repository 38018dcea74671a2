#!/usr/bin/env node
// Tests of check_split.js's comparison: integers (int64 as BigInt, beyond
// 2^53 too), booleans and strings exactly; floats within the tolerances.
// Usage: node check_split_test.js. Prints the failures; exit 0 when none.
'use strict';
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));
const { compare } = require(path.join(__dirname, 'check_split.js'));

const opts = { rtol: 1e-4, atol: 1e-5 };
let failed = 0;
function expect(what, want, got, ok) {
  const c = compare(want, got, opts);
  if (c.ok !== ok) {
    ++failed;
    console.log(`FAIL ${what}: ok ${c.ok}, want ${ok} (${c.reason})`);
  }
}
const t = (type, data, dims) => new ort.Tensor(type, data, dims || [data.length]);
const big = 2n ** 53n;  // Number(2^53 + 1) === Number(2^53)

expect('int64 equal above 2^53', t('int64', BigInt64Array.from([big + 1n, -big - 1n])),
       t('int64', BigInt64Array.from([big + 1n, -big - 1n])), true);
expect('int64 off by one above 2^53', t('int64', BigInt64Array.from([big + 1n])),
       t('int64', BigInt64Array.from([big])), false);
expect('int64 at the extremes', t('int64', BigInt64Array.from([2n ** 63n - 1n])),
       t('int64', BigInt64Array.from([2n ** 63n - 2n])), false);
expect('uint64 off by one above 2^53', t('uint64', BigUint64Array.from([2n ** 64n - 1n])),
       t('uint64', BigUint64Array.from([2n ** 64n - 2n])), false);
expect('int32 off by one', t('int32', Int32Array.from([7])), t('int32', Int32Array.from([8])), false);
expect('bool differs', t('bool', Uint8Array.from([1, 0])), t('bool', Uint8Array.from([1, 1])), false);
expect('bool equal', t('bool', Uint8Array.from([1, 0])), t('bool', Uint8Array.from([1, 0])), true);
expect('string differs', t('string', ['a', 'b']), t('string', ['a', 'c']), false);
expect('float within tolerance', t('float32', Float32Array.from([1])), t('float32', Float32Array.from([1.00005])), true);
expect('float beyond tolerance', t('float32', Float32Array.from([1])), t('float32', Float32Array.from([1.001])), false);
expect('shape differs', t('int64', BigInt64Array.from([1n, 2n]), [2]), t('int64', BigInt64Array.from([1n, 2n]), [1, 2]), false);
const c = compare(t('int64', BigInt64Array.from([big + 3n])), t('int64', BigInt64Array.from([big])), opts);
if (c.maxAbs !== 3) { ++failed; console.log(`FAIL int64 difference reported as ${c.maxAbs}, want 3`); }

console.log(failed ? `check_split_test: ${failed} failed` : 'check_split_test: all passed');
process.exitCode = failed ? 1 : 0;
