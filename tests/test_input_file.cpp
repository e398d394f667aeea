// Every reader of the engine opens its file through core/binary_file.h's InputFile (issue 24,
// class 4): a FIFO, a device or a directory is refused at once, naming what it is, by each of
// them; reads stop at the size taken at the open; path_exists tells "nothing there" from
// "cannot look".
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/binary_file.h"
#include "core/error.h"
#include "datasets/cifar10.h"
#include "datasets/csv.h"
#include "datasets/idx.h"
#include "datasets/jpeg_image.h"
#include "datasets/npy.h"
#include "file_fixtures.h"
#include "nn/checkpoint.h"
#include "nn/layers.h"
#include "nn/model_file.h"
#include "nn/optimizers.h"
#include "nn/weights_io.h"
#include "special_files.h"

using namespace engine;
using engine::test::check_message;
using engine::test::error_of;
using engine::test::TempDir;

namespace {

using Reader = std::function<void(const std::string& path)>;

// Each file reader of the engine, by name, called on a path.
std::vector<std::pair<std::string, Reader>> all_readers() {
  const auto model = std::make_shared<nn::Sequential>(
      nn::Sequential{nn::flatten(), nn::dense(2, Activation::Softmax)});
  model->build({2, 2}, Device::cpu(), 1);
  model->compile(std::make_unique<nn::Adam>(), nn::Loss::SparseCategoricalCrossentropy);
  return {
      {"read_file", [](const std::string& p) { read_file(p, "test"); }},
      {"read_idx", [](const std::string& p) { datasets::read_idx(p); }},
      {"read_cifar10_batch", [](const std::string& p) { datasets::read_cifar10_batch(p, 0); }},
      {"read_csv", [](const std::string& p) { datasets::read_csv(p); }},
      {"read_npy", [](const std::string& p) { datasets::read_npy(p); }},
      {"decode_jpeg_file",
       [](const std::string& p) {
         std::vector<uint8_t> rgb(8 * 8 * 3);
         datasets::decode_jpeg_file(p, 8, 8, rgb.data());
       }},
      {"load_weights", [model](const std::string& p) { nn::load_weights(*model, p); }},
      {"load_checkpoint", [model](const std::string& p) { nn::load_checkpoint(*model, p); }},
      {"load_model", [](const std::string& p) { nn::load_model(p); }},
  };
}

}  // namespace

TEST_CASE("every file reader refuses a FIFO at once, naming it, instead of waiting for a writer") {
  TempDir dir;
  const test::WatchedFifo fifo(dir.file("pipe"));
  for (const auto& reader : all_readers()) {
    CAPTURE(reader.first);
    check_message(error_of([&] { reader.second(fifo.path()); }),
                  {fifo.path() + ": is a FIFO (named pipe), not a regular file"});
  }
}

TEST_CASE("every file reader refuses a device (/dev/null, /dev/zero) rather than reading it") {
  // /dev/zero never ends: the old read_file read it until std::bad_alloc. /dev/null is empty:
  // before, each reader called it an empty or truncated file of its kind.
  for (const std::string device : {"/dev/null", "/dev/zero"}) {
    for (const auto& reader : all_readers()) {
      CAPTURE(reader.first);
      CAPTURE(device);
      check_message(error_of([&] { reader.second(device); }),
                    {device + ": is a character device, not a regular file"});
    }
  }
}

TEST_CASE("every file reader refuses a directory and names a missing file") {
  TempDir dir;
  const std::string missing = dir.file("missing");
  for (const auto& reader : all_readers()) {
    CAPTURE(reader.first);
    check_message(error_of([&] { reader.second(dir.str()); }),
                  {dir.str() + ": is a directory, not a file"});
    check_message(error_of([&] { reader.second(missing); }), {missing + ": no such file"});
  }
}

TEST_CASE("InputFile: reads stop at the size the file had when it was opened") {
  TempDir dir;
  const std::string path = dir.file("growing");
  test::write_bytes(path, {1, 2, 3, 4});
  InputFile file(path, "growing file");
  CHECK(file.size() == 4);
  test::write_bytes(path, test::Bytes(1000, 9));  // the file grows after the open
  std::vector<uint8_t> buffer(1000);
  CHECK(file.read(buffer.data(), buffer.size()) == 4);
  CHECK(file.read(buffer.data(), buffer.size()) == 0);
  file.seek(2);
  CHECK(file.read(buffer.data(), buffer.size()) == 2);
  check_message(error_of([&] { file.seek(5); }), {"growing file", "cannot seek to byte 5 of 4"});
}

TEST_CASE("path_exists: nothing there is false; a folder that cannot be searched is an error") {
  TempDir dir;
  test::write_bytes(dir.file("here"), {1});
  CHECK(path_exists(dir.file("here")));
  CHECK_FALSE(path_exists(dir.file("not-here")));
  CHECK_FALSE(path_exists(dir.file("here/below-a-file")));  // ENOTDIR: nothing can be there

  const std::string locked = dir.file("locked");
  std::filesystem::create_directory(locked);
  const test::UnreadableFolder unreadable(locked);
  if (unreadable.bypassed()) {
    MESSAGE("not checked: this process (root) reads a folder whatever its permissions");
    return;
  }
  check_message(error_of([&] { path_exists(locked + "/file"); }),
                {locked + "/file", "cannot tell whether it exists (Permission denied)"});
}
