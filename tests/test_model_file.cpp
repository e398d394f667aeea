// Model files (nn/model_file.h): a model of every layer kind saved and rebuilt by load_model
// alone, predicting bit for bit as the original and training on like it; every kind of bad file
// refused with one line naming the file and the problem; a weights file handed to load_model,
// and a model file to load_weights, named as such with the function to use.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/binary_file.h"
#include "core/error.h"
#include "nn/layers.h"
#include "nn/model_file.h"
#include "nn/optimizers.h"
#include "nn/weights_io.h"
#include "tests/file_fixtures.h"
#include "tests/toy_data.h"

using namespace engine;
using engine::test::check_message;
using engine::test::error_of;
using engine::test::TempDir;

namespace {

constexpr char MODEL_MAGIC[8] = {'E', 'N', 'G', 'M', 'O', 'D', 'E', 'L'};

// Every layer kind of nn/layers.h, every activation and both paddings, on an (8, 8, 2) input.
nn::Sequential every_kind(uint64_t seed) {
  nn::Sequential model{nn::conv2d(3, 3, Padding::Same, Activation::Relu),            // (8, 8, 3)
                       nn::conv2d(4, 2, Padding::Valid, Activation::Tanh, 2),        // (4, 4, 4)
                       nn::max_pool2d(2),                                             // (2, 2, 4)
                       nn::dropout(0.25f),
                       nn::flatten(),                                                 // (16)
                       nn::dense(7),
                       nn::dense(5, Activation::Sigmoid),
                       nn::dense(3, Activation::Softmax)};
  model.build({8, 8, 2}, Device::cpu(), seed);
  return model;
}

Tensor random_input(int64_t batch, const Shape& sample, uint64_t seed) {
  Generator rng(seed);
  Shape shape{batch};
  shape.insert(shape.end(), sample.begin(), sample.end());
  std::vector<float> x(static_cast<size_t>(numel(shape)));
  for (float& v : x) v = 2.0f * rng.uniform() - 1.0f;
  return Tensor::from_vector(x, shape);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::string summary_of(const nn::Sequential& model) {
  std::ostringstream out;
  model.summary(out);
  return out.str();
}

// One layer as a model file stores it, for writing files by hand.
struct LayerRecord {
  std::string kind;
  std::vector<nn::LayerSetting> settings;
};

// A model file written field by field (docs/model_format.md), so a test can put anything in
// any field: the input shape, the layers, the stored parameter count, and the tensor records
// of `weights` (none: a tensor count of 0).
std::vector<uint8_t> model_bytes(const Shape& input, const std::vector<LayerRecord>& layers,
                                 uint64_t stored, const nn::ParameterStore* weights = nullptr,
                                 uint32_t version = nn::MODEL_FORMAT_VERSION) {
  ByteWriter out(MODEL_MAGIC, version);
  out.put<uint32_t>(static_cast<uint32_t>(input.size()));
  for (int64_t d : input) out.put<int64_t>(d);
  out.put<uint32_t>(static_cast<uint32_t>(layers.size()));
  for (const LayerRecord& layer : layers) {
    out.string(layer.kind);
    out.put<uint32_t>(static_cast<uint32_t>(layer.settings.size()));
    for (const auto& s : layer.settings) {
      out.string(s.name);
      out.put<double>(s.value);
    }
  }
  out.put<uint64_t>(stored);
  if (weights != nullptr) {
    nn::write_parameter_records(out, *weights);
  } else {
    out.put<uint32_t>(0);
  }
  const Bytes& file = out.finish();
  return {file.begin(), file.end()};
}

// Flatten -> Dense(4, relu) on a (2, 3) input: 6 * 4 + 4 = 28 parameters.
const std::vector<LayerRecord> SMALL = {{"Flatten", {}},
                                        {"Dense", {{"units", 4}, {"activation", 1}}}};

// The last 4 bytes made the CRC-32 of those before them, as the writer would have.
void fix_checksum(std::vector<uint8_t>& b) {
  const size_t body = b.size() - 4;
  const uint32_t crc = crc32_of(reinterpret_cast<const char*>(b.data()), body);
  std::memcpy(b.data() + body, &crc, sizeof crc);
}

std::string load_error(const std::string& path) {
  return error_of([&] { nn::load_model(path); });
}

// The message load_model gives for `bytes`, checked to be one line naming the file.
std::string error_for(const TempDir& dir, const std::vector<uint8_t>& bytes) {
  const std::string path = dir.file("bad.model");
  engine::test::write_bytes(path, bytes);
  const std::string message = load_error(path);
  check_message(message, {path});
  return message;
}

}  // namespace

TEST_CASE("a model of every layer kind rebuilds from its file alone and predicts bit for bit") {
  TempDir dir;
  nn::Sequential original = every_kind(123);
  const std::string path = dir.file("every_kind.model");
  nn::save_model(original, path);
  CHECK_FALSE(std::ifstream(path + ".tmp").good());  // written through path.tmp, renamed

  nn::Sequential loaded = nn::load_model(path);
  CHECK(loaded.device().is_cpu());
  CHECK(loaded.input_shape() == original.input_shape());
  CHECK(loaded.output_shape() == original.output_shape());
  CHECK(summary_of(loaded) == summary_of(original));  // names, kinds, shapes, counts
  REQUIRE(loaded.layers().size() == original.layers().size());
  for (size_t i = 0; i < loaded.layers().size(); ++i) {
    const auto& a = original.layers()[i];
    const auto& b = loaded.layers()[i];
    CHECK(b->type() == a->type());
    CHECK(b->activation() == a->activation());
    const auto ca = a->config(), cb = b->config();
    REQUIRE(ca.size() == cb.size());
    for (size_t k = 0; k < ca.size(); ++k) {
      CHECK(cb[k].name == ca[k].name);
      CHECK(cb[k].value == ca[k].value);
    }
  }
  CHECK(same_bits(loaded.parameters().values.to_vector(),
                  original.parameters().values.to_vector()));

  const Tensor x = random_input(5, {8, 8, 2}, 9);
  CHECK(same_bits(loaded.predict(x, 2).to_vector(), original.predict(x, 2).to_vector()));

  // Saving the loaded model gives the same bytes: nothing is lost or added on the way.
  const std::string again = dir.file("again.model");
  nn::save_model(loaded, again);
  CHECK(engine::test::read_bytes(again) == engine::test::read_bytes(path));
}

TEST_CASE("a loaded model is not compiled; compiled, it trains on exactly as the original") {
  TempDir dir;
  const auto make = [] {
    nn::Sequential m{nn::flatten(), nn::dense(8, Activation::Relu), nn::dropout(0.3f),
                     nn::dense(2, Activation::Softmax)};
    m.build({2, 3}, Device::cpu(), 5);
    return m;
  };
  nn::Sequential original = make();
  const std::string path = dir.file("toy.model");
  nn::save_model(original, path);
  nn::Sequential loaded = nn::load_model(path);
  check_message(error_of([&] { loaded.optimizer(); }), {"compile"});

  const nn::Dataset data = engine::test::toy_data(40, 3);
  nn::FitOptions options;
  options.epochs = 2;
  options.batch_size = 8;
  options.seed = 7;
  options.verbose = false;
  for (nn::Sequential* m : {&original, &loaded}) {
    m->compile(std::make_unique<nn::Adam>(), nn::Loss::SparseCategoricalCrossentropy);
    m->fit(data, options);
  }
  CHECK(same_bits(loaded.parameters().values.to_vector(),
                  original.parameters().values.to_vector()));
}

TEST_CASE("weights files and model files: each loader names the other's files") {
  TempDir dir;
  nn::Sequential model{nn::flatten(), nn::dense(4, Activation::Relu)};
  model.build({2, 3}, Device::cpu(), 1);
  const std::string weights = dir.file("m.weights"), model_path = dir.file("m.model");
  nn::save_weights(model, weights);
  nn::save_model(model, model_path);

  check_message(load_error(weights), {weights, "a weights file", "load_weights"});
  const std::vector<float> before = model.parameters().values.to_vector();
  check_message(error_of([&] { nn::load_weights(model, model_path); }),
                {model_path, "a model file", "load_model"});
  CHECK(model.parameters().values.to_vector() == before);

  // The weights file still loads into a model built in code, as before.
  nn::Sequential built{nn::flatten(), nn::dense(4, Activation::Relu)};
  built.build({2, 3}, Device::cpu(), 2);
  nn::load_weights(built, weights);
  CHECK(same_bits(built.parameters().values.to_vector(), before));
}

TEST_CASE("bad model files are refused with one line naming the file and the problem") {
  TempDir dir;
  nn::Sequential model = every_kind(1);
  const std::string good = dir.file("good.model");
  nn::save_model(model, good);
  const std::vector<uint8_t> bytes = engine::test::read_bytes(good);

  // The fields the hand-written files below start from: the model SMALL describes, and its
  // weights' records.
  nn::Sequential small{nn::flatten(), nn::dense(4, Activation::Relu)};
  small.build({2, 3}, Device::cpu(), 1);
  const nn::ParameterStore* weights = &small.parameters();
  // Written by hand as it is, the file loads: the cases below each change one thing.
  engine::test::write_bytes(dir.file("small.model"), model_bytes({2, 3}, SMALL, 28, weights));
  CHECK(same_bits(nn::load_model(dir.file("small.model")).parameters().values.to_vector(),
                  small.parameters().values.to_vector()));

  SUBCASE("missing") {
    check_message(load_error(dir.file("nothing_here")), {"nothing_here", "no such file"});
  }
  SUBCASE("empty") { CHECK(error_for(dir, {}).find("truncated") != std::string::npos); }
  SUBCASE("cut in half") {
    const std::string msg =
        error_for(dir, {bytes.begin(), bytes.begin() + static_cast<long>(bytes.size() / 2)});
    CHECK((msg.find("truncated") != std::string::npos || msg.find("checksum") != std::string::npos));
  }
  SUBCASE("bad magic") {
    std::vector<uint8_t> b = bytes;
    b[0] = 'X';
    CHECK(error_for(dir, b).find("not a model file (bad magic)") != std::string::npos);
  }
  SUBCASE("a newer version") {
    CHECK(error_for(dir, model_bytes({2, 3}, SMALL, 28, weights, nn::MODEL_FORMAT_VERSION + 1))
              .find("written by a newer engine") != std::string::npos);
  }
  SUBCASE("one byte changed") {
    std::vector<uint8_t> b = bytes;
    b[b.size() / 2] ^= 0x10;
    CHECK(error_for(dir, b).find("checksum mismatch") != std::string::npos);
  }
  SUBCASE("a checkpoint") {
    // Another of the engine's files: its magic is not a model file's.
    CHECK(error_for(dir, {'E', 'N', 'G', 'C', 'K', 'P', 'N', 'T', 1, 0, 0, 0, 0, 0, 0, 0})
              .find("bad magic") != std::string::npos);
  }
  SUBCASE("an unknown layer kind") {
    const std::string msg = error_for(dir, model_bytes({2, 3}, {{"LSTM", {}}}, 0));
    CHECK(msg.find("layer 1 (LSTM): unknown layer kind") != std::string::npos);
  }
  SUBCASE("a kind that is not a name") {
    CHECK(error_for(dir, model_bytes({2, 3}, {{"Dense\n", {}}}, 0)).find("unreadable kind") !=
          std::string::npos);
  }
  SUBCASE("a setting missing, unknown or repeated") {
    CHECK(error_for(dir, model_bytes({6}, {{"Dense", {{"activation", 0}}}}, 0))
              .find("layer 1 (Dense): setting 'units' is missing") != std::string::npos);
    CHECK(error_for(dir, model_bytes({6}, {{"Dense", {{"units", 2}, {"activation", 0}, {"bias", 1}}}}, 0))
              .find("unknown setting 'bias'") != std::string::npos);
    CHECK(error_for(dir, model_bytes({6}, {{"Dense", {{"units", 2}, {"units", 2}, {"activation", 0}}}}, 0))
              .find("'units' given twice") != std::string::npos);
    CHECK(error_for(dir, model_bytes({6}, {{"Flatten", {{"units", 2}}}}, 0))
              .find("unknown setting 'units'") != std::string::npos);
  }
  SUBCASE("bad setting values") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const auto dense = [&](double units, double activation) {
      return error_for(dir, model_bytes({6}, {{"Dense", {{"units", units}, {"activation", activation}}}}, 0));
    };
    CHECK(dense(0, 0).find("'units' must be a whole number in [1, 2147483647], got 0") != std::string::npos);
    CHECK(dense(2.5, 0).find("got 2.5") != std::string::npos);
    CHECK(dense(nan, 0).find("'units' must be a whole number") != std::string::npos);
    CHECK(dense(1e300, 0).find("'units' must be a whole number") != std::string::npos);
    CHECK(dense(2, 5).find("'activation' must be a whole number in [0, 4], got 5") != std::string::npos);
    const auto conv = [&](double kernel, double padding) {
      return error_for(dir, model_bytes({4, 4, 1}, {{"Conv2D", {{"filters", 2}, {"kernel_size", kernel},
                                                               {"strides", 1}, {"padding", padding},
                                                               {"activation", 0}}}}, 0));
    };
    CHECK(conv(5000, 0).find("'kernel_size' must be a whole number in [1, 1024]") != std::string::npos);
    CHECK(conv(3, 2).find("'padding' must be a whole number in [0, 1], got 2") != std::string::npos);
    for (double rate : {1.0, -0.1, nan}) {
      CHECK(error_for(dir, model_bytes({6}, {{"Dropout", {{"rate", rate}}}}, 0))
                .find("layer 1 (Dropout): 'rate' must be in [0, 1)") != std::string::npos);
    }
    CHECK(error_for(dir, model_bytes({4, 4, 1}, {{"MaxPooling2D", {{"pool_size", -1}}}}, 0))
              .find("'pool_size' must be a whole number") != std::string::npos);
  }
  SUBCASE("an implausible input shape or layer count") {
    CHECK(error_for(dir, model_bytes({}, SMALL, 28)).find("implausible input rank 0") !=
          std::string::npos);
    CHECK(error_for(dir, model_bytes({1, 1, 1, 1, 1, 1, 1, 1, 1}, SMALL, 28))
              .find("implausible input rank 9") != std::string::npos);
    CHECK(error_for(dir, model_bytes({2, -3}, SMALL, 28)).find("implausible input shape (2, -3)") !=
          std::string::npos);
    CHECK(error_for(dir, model_bytes({2, 0}, SMALL, 28)).find("implausible input shape") !=
          std::string::npos);
    // 2^31 cubed would overflow a product taken without care.
    const int64_t big = int64_t{1} << 31;
    CHECK(error_for(dir, model_bytes({big, big, big}, SMALL, 28)).find("implausible input shape") !=
          std::string::npos);
    CHECK(error_for(dir, model_bytes({2, 3}, {}, 0)).find("implausible layer count 0") !=
          std::string::npos);
  }
  SUBCASE("layers that do not fit the input") {
    const std::string msg = error_for(dir, model_bytes({2, 3}, {{"Dense", {{"units", 4}, {"activation", 1}}}}, 28));
    CHECK(msg.find("layer 1 (Dense) does not fit its input") != std::string::npos);
    CHECK(msg.find("add Flatten first") != std::string::npos);
    CHECK(error_for(dir, model_bytes({4, 4, 1}, {{"Conv2D", {{"filters", 2}, {"kernel_size", 5},
                                                            {"strides", 1}, {"padding", 0},
                                                            {"activation", 0}}}}, 52))
              .find("a window of 5 does not fit in 4") != std::string::npos);
  }
  SUBCASE("a stored parameter count the layers do not need") {
    CHECK(error_for(dir, model_bytes({2, 3}, SMALL, 20, weights))
              .find("the layers need 28 parameters for input (2, 3) but the file stores 20") !=
          std::string::npos);
  }
  SUBCASE("layers too big for the file, refused before anything is allocated") {
    // 10^9 parameters claimed, and needed, by a file of a few hundred bytes.
    const std::vector<LayerRecord> wide = {{"Flatten", {}},
                                           {"Dense", {{"units", 1000000}, {"activation", 0}}}};
    CHECK(error_for(dir, model_bytes({1000}, wide, 1001000000)).find("file is truncated") !=
          std::string::npos);
    // Past any real model: 2^31 units on 2^20 inputs.
    const std::vector<LayerRecord> wider = {{"Flatten", {}},
                                            {"Dense", {{"units", 2147483647}, {"activation", 0}}}};
    CHECK(error_for(dir, model_bytes({1024, 1024}, wider, 0))
              .find("layer 2 (Dense) asks for an implausible number of parameters") !=
          std::string::npos);
  }
  SUBCASE("weights that are not the layers'") {
    CHECK(error_for(dir, model_bytes({2, 3}, SMALL, 28)).find("holds 0 tensors but the model has 2") !=
          std::string::npos);
    nn::Sequential narrow{nn::flatten(), nn::dense(3), nn::dense(1)};
    narrow.build({2, 3}, Device::cpu(), 1);  // 6*3+3 + 3*1+1 = 25 parameters in 4 tensors
    CHECK(error_for(dir, model_bytes({2, 3}, SMALL, 28, &narrow.parameters()))
              .find("holds 4 tensors but the model has 2") != std::string::npos);
  }
  SUBCASE("a tensor name with a line break still gives one line") {
    std::vector<uint8_t> b = model_bytes({2, 3}, SMALL, 28, weights);
    const std::string name = "dense/kernel";
    const auto at = std::search(b.begin(), b.end(), name.begin(), name.end());
    REQUIRE(at != b.end());
    *(at + 5) = '\n';
    fix_checksum(b);  // so that the reader gets as far as the name
    CHECK(error_for(dir, b).find("tensor 'dense?kernel'") != std::string::npos);
  }
  SUBCASE("trailing bytes") {
    std::vector<uint8_t> b = model_bytes({2, 3}, SMALL, 28, weights);
    b.insert(b.end() - 4, {0, 0, 0});
    fix_checksum(b);
    CHECK(error_for(dir, b).find("3 unexpected bytes after the last tensor") != std::string::npos);
  }
}

TEST_CASE("save_model refuses what load_model could not read back") {
  TempDir dir;
  const std::string path = dir.file("x.model");
  nn::Sequential unbuilt{nn::flatten(), nn::dense(2)};
  check_message(error_of([&] { nn::save_model(unbuilt, path); }), {"not built"});

  // A layer class of one's own: its weights can be saved, the model cannot.
  class Identity final : public nn::Layer {
   public:
    std::string type() const override { return "Identity"; }
    Shape build(const Shape& input_shape) override { return input_shape; }
    Tensor forward(const Tensor& x, nn::ForwardContext&) override { return x; }
  };
  nn::Sequential custom{nn::flatten(), std::make_shared<Identity>(), nn::dense(2)};
  custom.build({2, 3}, Device::cpu(), 1);
  check_message(error_of([&] { nn::save_model(custom, path); }),
                {path, "cannot save layer 'identity' (Identity)", "unknown layer kind", "save_weights"});
  CHECK_FALSE(std::ifstream(path).good());
  CHECK_FALSE(std::ifstream(path + ".tmp").good());
  check_message(error_of([&] { nn::save_model(every_kind(1), "/nonexistent_dir/x.model"); }),
                {"/nonexistent_dir/x.model"});
}

TEST_CASE("save_weights_npz: one stored .npy member per parameter, under its name") {
  TempDir dir;
  nn::Sequential m{nn::flatten(), nn::dense(4, Activation::Relu), nn::dense(2)};
  m.build({3}, Device::cpu(), 7);
  const std::string path = dir.file("weights.npz");
  nn::save_weights_npz(m, path);
  const auto file = engine::test::read_bytes(path);
  REQUIRE(file.size() > 4);
  CHECK(file[0] == 'P');  // a ZIP's local file header: "PK\3\4"
  CHECK(file[1] == 'K');
  const std::string text(file.begin(), file.end());
  for (const nn::Parameter& p : m.parameters().params) {
    INFO(p.name);
    CHECK(text.find(p.name + ".npy") != std::string::npos);  // np.load(path)[p.name]
  }
}

TEST_CASE("save_model refuses NaN weights, the old file kept; load_model refuses a file with one") {
  TempDir dir;
  const std::string path = dir.file("nan.model");
  nn::Sequential m{nn::flatten(), nn::dense(4, Activation::Relu), nn::dense(2)};
  m.build({3}, Device::cpu(), 7);
  nn::save_model(m, path);
  const auto good = engine::test::read_bytes(path);
  std::vector<float> values = m.parameters().values.to_vector();
  values[13] = -std::numeric_limits<float>::infinity();  // dense/bias: kernel (3, 4), then bias
  m.parameters().values.copy_from(Tensor::from_vector(values, {m.parameter_count()}));
  // Before issue 24 the infinity was written over the good file.
  check_message(error_of([&] { nn::save_model(m, path); }),
                {path, "not saving the model", "dense/bias holds -inf in the weights",
                 "a file already there is kept"});
  CHECK(engine::test::read_bytes(path) == good);

  // The good file with a NaN in its last number (dense_1/bias) and a checksum made right again.
  std::vector<uint8_t> bytes = good;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(bytes.data() + bytes.size() - 8, &nan, sizeof nan);
  fix_checksum(bytes);
  // Before issue 24 it loaded.
  check_message(error_for(dir, bytes),
                {"refusing the model", "dense_1/bias holds nan in the file"});
}
