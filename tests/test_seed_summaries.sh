#!/usr/bin/env bash
# The seed models as the apps build them, layer by layer in their own main: on a one-step CPU run
# each app prints the summary Keras prints for the article's script, every layer's name, output
# shape and parameter count, and the total. The layers' order, names and shapes are also what a
# weights file saved by the app holds. (The summary table itself, on models of the tests' own:
# tests/test_nn.cpp, tests/test_cnn.cpp.)
# Usage: test_seed_summaries.sh MNIST_MLP CIFAR10_CNN MNIST_CNN DOGS_VS_CATS MAKE_DOGS_CATS DATA_DIR
set -uo pipefail
mlp=${1:?mnist_mlp binary}; cifar=${2:?cifar10_cnn binary}; mnist_cnn=${3:?mnist_cnn binary}
dogs=${4:?dogs_vs_cats binary}; make=${5:?make_dogs_cats binary}; data=${6:?data dir}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

one_step=(--cpu --threads 2 --epochs 1 --steps-per-epoch 1)

expect_status 0 "mnist_mlp" -- "$mlp" "${one_step[@]}" --data-dir "$data"
expect_text "$tmp/out" \
  " flatten (Flatten)           (None, 784)               0" \
  " dense (Dense)               (None, 128)               100480" \
  " dropout (Dropout)           (None, 128)               0" \
  " dense_1 (Dense)             (None, 10)                1290" \
  "Total params: 101,770"

expect_status 0 "mnist_mlp --wide" -- "$mlp" "${one_step[@]}" --data-dir "$data" --wide
expect_text "$tmp/out" \
  " flatten (Flatten)           (None, 784)               0" \
  " dense (Dense)               (None, 1000)              785000" \
  " dropout (Dropout)           (None, 1000)              0" \
  " dense_1 (Dense)             (None, 1000)              1001000" \
  " dropout_1 (Dropout)         (None, 1000)              0" \
  " dense_2 (Dense)             (None, 10)                10010" \
  "Total params: 1,796,010"

expect_status 0 "cifar10_cnn" -- "$cifar" "${one_step[@]}" --dataset synthetic --test-images 100
expect_text "$tmp/out" \
  " conv2d (Conv2D)             (None, 32, 32, 32)        896" \
  " conv2d_1 (Conv2D)           (None, 32, 32, 32)        9248" \
  " max_pooling2d (MaxPooling2D) (None, 16, 16, 32)        0" \
  " conv2d_2 (Conv2D)           (None, 16, 16, 64)        18496" \
  " conv2d_3 (Conv2D)           (None, 16, 16, 64)        36928" \
  " max_pooling2d_1 (MaxPooling2D) (None, 8, 8, 64)          0" \
  " conv2d_4 (Conv2D)           (None, 8, 8, 128)         73856" \
  " conv2d_5 (Conv2D)           (None, 8, 8, 128)         147584" \
  " flatten (Flatten)           (None, 8192)              0" \
  " dropout (Dropout)           (None, 8192)              0" \
  " dense (Dense)               (None, 128)               1048704" \
  " dense_1 (Dense)             (None, 10)                1290" \
  "Total params: 1,337,002"

expect_status 0 "mnist_cnn" -- "$mnist_cnn" "${one_step[@]}" --data-dir "$data" --test-images 100
expect_text "$tmp/out" \
  " conv2d (Conv2D)             (None, 26, 26, 32)        320" \
  " conv2d_1 (Conv2D)           (None, 24, 24, 64)        18496" \
  " max_pooling2d (MaxPooling2D) (None, 12, 12, 64)        0" \
  " dropout (Dropout)           (None, 12, 12, 64)        0" \
  " flatten (Flatten)           (None, 9216)              0" \
  " dense (Dense)               (None, 128)               1179776" \
  " dropout_1 (Dropout)         (None, 128)               0" \
  " dense_1 (Dense)             (None, 10)                1290" \
  "Total params: 1,199,882"

# Dogs vs Cats at the article's 150x150 (the default --image-size), on a tree of 8 small JPEGs.
"$make" --out "$tmp/tree" --train-per-class 4 --validation-per-class 2 --min-size 40 \
  --max-size 80 --seed 3 > /dev/null || { echo "FAIL: make_dogs_cats"; exit 1; }
expect_status 0 "dogs_vs_cats" -- "$dogs" "${one_step[@]}" --workers 1 --batch-size 4 \
  --data-dir "$tmp/tree"
expect_text "$tmp/out" \
  " conv2d (Conv2D)             (None, 148, 148, 32)      896" \
  " max_pooling2d (MaxPooling2D) (None, 74, 74, 32)        0" \
  " conv2d_1 (Conv2D)           (None, 72, 72, 32)        9248" \
  " max_pooling2d_1 (MaxPooling2D) (None, 36, 36, 32)        0" \
  " conv2d_2 (Conv2D)           (None, 34, 34, 64)        18496" \
  " max_pooling2d_2 (MaxPooling2D) (None, 17, 17, 64)        0" \
  " flatten (Flatten)           (None, 18496)             0" \
  " dense (Dense)               (None, 64)                1183808" \
  " dropout (Dropout)           (None, 64)                0" \
  " dense_1 (Dense)             (None, 1)                 65" \
  "Total params: 1,212,513"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
