// make_dogs_cats: writes a synthetic stand-in for Kaggle's "Dogs vs. Cats" photographs, in the
// folder layout of the Keras blog post that article 004 follows (docs/SOURCES.md):
//
//   DIR/train/cats/cat.0.jpg ... cat.999.jpg          DIR/train/dogs/dog.0.jpg ... dog.999.jpg
//   DIR/validation/cats/cat.1000.jpg ... cat.1399.jpg DIR/validation/dogs/dog.1000.jpg ...
//
// Why synthetic: the real photographs cannot be fetched on this project's machines, and random
// pixels would time the training but teach the model nothing. These images are meant to be
// learnable, but only through shapes:
//   * The background is a smooth random field: a few low-frequency sine waves and a gradient blend
//     two random colours and vary the brightness, with a little grain on top. Every image has its
//     own palette.
//   * 1-3 animals of the image's class: the first is the photograph's subject, 35%-60% of the
//     image's short side tall and near the middle, in front of everything; the others are 10%-40%
//     and anywhere. Each is tilted by up to 30 degrees either way, mirrored or not, in a random
//     colour with shading and sometimes stripes; some have a body under the head, most have eyes.
//       cat: a round head with two pointed, triangular ears on top;
//       dog: seen from the front, a longer head with a muzzle and two long rounded ears hanging
//            down its sides; or seen from the side, a head with a snout and one hanging ear.
//   * 0-2 distractors that both classes share: circles, ellipses, triangles, bars and rounded
//     rectangles, 10%-40%, drawn before or after the other animals (sometimes hiding part of one).
//     A triangle alone or a circle alone says nothing: the class is in how the parts fit together.
// Colours, sizes, counts, image sizes (each side 100-500 pixels by default), JPEG quality and the
// share of grayscale (about 5%) and CMYK (about 1%) files come from the same distributions for both
// classes, so a model that sees only colour histograms or image statistics stays at 50%.
// Measured on default trees: a logistic regression on colour histograms and channel statistics got
// 51%-53% on the validation images (seeds 42, 7, 8; the heads and ears are sized so that cats and
// dogs cover about the same area); the seed-004 CNN (scripts/pytorch/dogs_vs_cats.py --mode
// compute, no augmentation) went from 50% to 70% in ten epochs while fitting the training images
// to 85%: learnable, but not trivially.
//
// The grayscale and CMYK files are there to exercise a reader's colour conversions. The CMYK files
// carry an Adobe marker and store inverted values, as Photoshop writes them and as libjpeg-turbo's
// and Pillow's readers expect: on the stored bytes, R = C * K / 255, G = M * K / 255, B = Y * K / 255.
//
// Every image has its own random stream, keyed by (seed, split, class, index), so a seed gives the
// same tree whatever the number of threads, and the images are drawn in parallel (OpenMP).
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <cstdio>  // before jpeglib.h, which uses FILE and size_t
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <jpeglib.h>

#include "core/rng.h"

namespace {

namespace fs = std::filesystem;

constexpr float kPi = 3.14159265358979f;

// A refusal or a failure: main prints its message on one line and exits with status 2.
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- random numbers ---------------------------------------------------------------------------

// One image's random stream: Philox (core/rng.h) keyed by the seed, with the image's id in the
// high counter word and the draw number in the low one. No state is shared between images.
class Stream {
 public:
  Stream(uint64_t seed, uint64_t image_id) : seed_(seed), image_id_(image_id) {}

  uint32_t bits() {
    if (used_ == 4) {  // one Philox call gives four 32-bit words
      block_ = engine::philox4x32(counter_++, image_id_, seed_);
      used_ = 0;
    }
    return block_.v[used_++];
  }
  float uniform() { return engine::uniform_from_bits(bits()); }  // [0, 1)
  float uniform(float low, float high) { return low + (high - low) * uniform(); }
  // An integer in [low, high], both included (the top bits of a product: no modulo bias to speak
  // of, and no float rounding).
  int integer(int low, int high) {
    const uint64_t span = static_cast<uint64_t>(high - low) + 1;
    return low + static_cast<int>((static_cast<uint64_t>(bits()) * span) >> 32);
  }
  bool chance(float probability) { return uniform() < probability; }
  float angle() { return uniform(0.0f, 2.0f * kPi); }
  float degrees(float low, float high) { return uniform(low, high) * kPi / 180.0f; }

 private:
  uint64_t seed_, image_id_, counter_ = 0;
  engine::Philox4x32 block_{};
  int used_ = 4;
};

// The background's grain takes a number per pixel and needs no statistical finesse: Marsaglia's
// 32-bit xorshift, seeded from the image's stream, is ten times cheaper than a Philox draw.
class Xorshift32 {
 public:
  explicit Xorshift32(uint32_t seed) : state_(seed == 0 ? 0x9E3779B9u : seed) {}
  uint32_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return state_;
  }

 private:
  uint32_t state_;
};

// ---- geometry ---------------------------------------------------------------------------------

struct Vec2 {
  float x = 0, y = 0;
};
Vec2 operator+(Vec2 a, Vec2 b) { return {a.x + b.x, a.y + b.y}; }
Vec2 operator-(Vec2 a, Vec2 b) { return {a.x - b.x, a.y - b.y}; }
Vec2 operator*(Vec2 a, float s) { return {a.x * s, a.y * s}; }
float dot(Vec2 a, Vec2 b) { return a.x * b.x + a.y * b.y; }
float cross(Vec2 a, Vec2 b) { return a.x * b.y - a.y * b.x; }
float length(Vec2 a) { return std::sqrt(dot(a, a)); }
// Turns v by the angle whose cosine and sine are c and s (y points down, as in an image).
Vec2 turn(Vec2 v, float c, float s) { return {c * v.x - s * v.y, s * v.x + c * v.y}; }
// A unit vector at `angle` from "up" (0, -1), leaning right for a positive angle.
Vec2 from_up(float angle) { return {std::sin(angle), -std::cos(angle)}; }

// One primitive shape of a figure, in the figure's own units (a figure is about one unit tall).
struct Part {
  enum class Kind { Circle, Ellipse, Triangle, Box, Capsule };
  Kind kind = Kind::Circle;
  Vec2 p0, p1, p2;       // Circle, Ellipse, Box: p0 is the centre; Triangle: the corners;
                         // Capsule: p0 and p1 are the ends of its axis
  Vec2 size;             // Ellipse: the semi-axes; Box: the half sides
  float radius = 0;      // Circle: the radius; Box: the corner radius; Capsule: half its width
  float cos_a = 1, sin_a = 0;  // Ellipse, Box: their rotation
};

Part circle(Vec2 centre, float radius) {
  Part p;
  p.kind = Part::Kind::Circle;
  p.p0 = centre;
  p.radius = radius;
  return p;
}
Part ellipse(Vec2 centre, Vec2 semi_axes, float angle) {
  Part p;
  p.kind = Part::Kind::Ellipse;
  p.p0 = centre;
  p.size = semi_axes;
  p.cos_a = std::cos(angle);
  p.sin_a = std::sin(angle);
  return p;
}
Part triangle(Vec2 a, Vec2 b, Vec2 c) {
  Part p;
  p.kind = Part::Kind::Triangle;
  p.p0 = a;
  p.p1 = b;
  p.p2 = c;
  return p;
}
Part box(Vec2 centre, Vec2 half_sides, float angle, float corner) {
  Part p;
  p.kind = Part::Kind::Box;
  p.p0 = centre;
  p.size = half_sides;
  p.radius = std::min({corner, half_sides.x, half_sides.y});
  p.cos_a = std::cos(angle);
  p.sin_a = std::sin(angle);
  return p;
}
Part capsule(Vec2 a, Vec2 b, float half_width) {
  Part p;
  p.kind = Part::Kind::Capsule;
  p.p0 = a;
  p.p1 = b;
  p.radius = half_width;
  return p;
}

// Signed distance from the point q to the part's edge, in the figure's units: negative inside.
// The painter turns it into a pixel's coverage, which anti-aliases every edge for free.
float distance(const Part& part, Vec2 q) {
  switch (part.kind) {
    case Part::Kind::Circle:
      return length(q - part.p0) - part.radius;
    case Part::Kind::Ellipse: {
      const Vec2 v = turn(q - part.p0, part.cos_a, -part.sin_a);  // into the ellipse's own axes
      const float a = part.size.x, b = part.size.y;
      // k = 1 on the edge. One Newton step from the point towards the edge gives the distance to
      // first order, d = (k - 1) / |grad k| with grad k = (x / a^2, y / b^2) / k: exact for a
      // circle, and good near the edge, where it matters.
      const float k = length({v.x / a, v.y / b});
      const float g = length({v.x / (a * a), v.y / (b * b)});
      if (g < 1e-6f) return -std::min(a, b);  // the very centre
      return k * (k - 1.0f) / g;
    }
    case Part::Kind::Triangle: {
      // Inside a convex shape the nearest edge point is on the nearest side, so the distance is
      // the smallest distance to the three sides either way; only its sign needs the inside test.
      const Vec2 corners[3] = {part.p0, part.p1, part.p2};
      const float orientation = cross(part.p1 - part.p0, part.p2 - part.p0) < 0 ? -1.0f : 1.0f;
      float nearest = std::numeric_limits<float>::max();
      bool inside = true;
      for (int i = 0; i < 3; ++i) {
        const Vec2 a = corners[i], edge = corners[(i + 1) % 3] - a, to_q = q - a;
        const float t = std::clamp(dot(to_q, edge) / std::max(dot(edge, edge), 1e-12f), 0.0f, 1.0f);
        nearest = std::min(nearest, length(to_q - edge * t));
        if (orientation * cross(edge, to_q) < 0) inside = false;  // on the outer side of this edge
      }
      return inside ? -nearest : nearest;
    }
    case Part::Kind::Box: {
      // A box shrunk by the corner radius, then grown by it again: rounded corners.
      const Vec2 v = turn(q - part.p0, part.cos_a, -part.sin_a);
      const float r = part.radius;
      const float dx = std::abs(v.x) - part.size.x + r, dy = std::abs(v.y) - part.size.y + r;
      const float outside = length({std::max(dx, 0.0f), std::max(dy, 0.0f)});
      const float inside = std::min(std::max(dx, dy), 0.0f);
      return outside + inside - r;
    }
    case Part::Kind::Capsule: {
      const Vec2 axis = part.p1 - part.p0, to_q = q - part.p0;
      const float t = std::clamp(dot(to_q, axis) / std::max(dot(axis, axis), 1e-12f), 0.0f, 1.0f);
      return length(to_q - axis * t) - part.radius;
    }
  }
  return std::numeric_limits<float>::max();
}

// A box in the figure's units that holds the part (generous for rotated ellipses and boxes).
void extend_bounds(const Part& part, Vec2& low, Vec2& high) {
  auto include = [&](Vec2 p, float margin) {
    low = {std::min(low.x, p.x - margin), std::min(low.y, p.y - margin)};
    high = {std::max(high.x, p.x + margin), std::max(high.y, p.y + margin)};
  };
  switch (part.kind) {
    case Part::Kind::Circle:
      include(part.p0, part.radius);
      break;
    case Part::Kind::Ellipse:
      include(part.p0, std::max(part.size.x, part.size.y));
      break;
    case Part::Kind::Triangle:
      include(part.p0, 0);
      include(part.p1, 0);
      include(part.p2, 0);
      break;
    case Part::Kind::Box:
      include(part.p0, length(part.size));
      break;
    case Part::Kind::Capsule:
      include(part.p0, part.radius);
      include(part.p1, part.radius);
      break;
  }
}

// ---- colours and the canvas -------------------------------------------------------------------

struct Rgb {
  float r = 0, g = 0, b = 0;  // each in [0, 1]
};
Rgb operator*(Rgb c, float s) { return {c.r * s, c.g * s, c.b * s}; }
Rgb mix(Rgb a, Rgb b, float t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}
float luma(Rgb c) { return 0.299f * c.r + 0.587f * c.g + 0.114f * c.b; }  // JPEG's (BT.601) weights
float colour_distance(Rgb a, Rgb b) {
  const float dr = a.r - b.r, dg = a.g - b.g, db = a.b - b.b;
  return std::sqrt(dr * dr + dg * dg + db * db);
}

// Hue, saturation and value in [0, 1] to RGB: the hue circle is six sectors, in each of which
// one channel is at the value, one at the floor v (1 - s), and one ramps between them.
Rgb from_hsv(float h, float s, float v) {
  const float h6 = (h - std::floor(h)) * 6.0f;
  const int sector = std::min(static_cast<int>(h6), 5);
  const float f = h6 - static_cast<float>(sector);
  const float floor_value = v * (1 - s), falling = v * (1 - s * f), rising = v * (1 - s * (1 - f));
  switch (sector) {
    case 0: return {v, rising, floor_value};
    case 1: return {falling, v, floor_value};
    case 2: return {floor_value, v, rising};
    case 3: return {floor_value, falling, v};
    case 4: return {rising, floor_value, v};
    default: return {v, floor_value, falling};
  }
}

Rgb random_colour(Stream& rng) {
  return from_hsv(rng.uniform(), rng.uniform(0.05f, 0.85f), rng.uniform(0.15f, 0.95f));
}

// The picture being drawn: RGB floats in [0, 1], row by row.
struct Canvas {
  int width = 0, height = 0;
  std::vector<Rgb> pixels;
  Rgb& at(int x, int y) { return pixels[static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)]; }
};

// A plane wave across the picture, in pixels: amplitude * sin(kx x + ky y + phase).
struct Wave {
  float kx, ky, phase, amplitude;
};

Wave random_wave(Stream& rng, float short_side, float min_cycles, float max_cycles, float amplitude) {
  // min_cycles..max_cycles periods across the short side: low frequencies, a smooth field
  const float k = 2.0f * kPi * rng.uniform(min_cycles, max_cycles) / short_side;
  const float direction = rng.angle();
  return {k * std::cos(direction), k * std::sin(direction), rng.angle(), amplitude * rng.uniform(0.3f, 1.0f)};
}

// The sum of some waves at every pixel. sin(a + b) = sin a cos b + cos a sin b splits each wave
// into a column factor and a row factor, so the picture costs two multiply-adds per wave and pixel
// instead of a sine.
std::vector<float> wave_field(const std::vector<Wave>& waves, int width, int height) {
  std::vector<float> field(static_cast<size_t>(width) * static_cast<size_t>(height), 0.0f);
  std::vector<float> sin_x(static_cast<size_t>(width)), cos_x(static_cast<size_t>(width));
  for (const Wave& w : waves) {
    for (int x = 0; x < width; ++x) {
      sin_x[static_cast<size_t>(x)] = std::sin(w.kx * static_cast<float>(x));
      cos_x[static_cast<size_t>(x)] = std::cos(w.kx * static_cast<float>(x));
    }
    for (int y = 0; y < height; ++y) {
      const float row_angle = w.ky * static_cast<float>(y) + w.phase;
      const float sin_y = w.amplitude * std::sin(row_angle), cos_y = w.amplitude * std::cos(row_angle);
      float* row = field.data() + static_cast<size_t>(y) * static_cast<size_t>(width);
      for (int x = 0; x < width; ++x) {
        row[x] += sin_x[static_cast<size_t>(x)] * cos_y + cos_x[static_cast<size_t>(x)] * sin_y;
      }
    }
  }
  return field;
}

// The smooth background: two colours blended by one wave field, the brightness modulated by
// another and by a gradient, and a little grain (the same for the three channels, like a sensor's
// luminance noise; more would only make the files bigger). Returns the two colours.
struct Palette {
  Rgb first, second;
};

Palette paint_background(Canvas& canvas, Stream& rng) {
  const float short_side = static_cast<float>(std::min(canvas.width, canvas.height));
  const Rgb first = random_colour(rng), second = random_colour(rng);
  std::vector<Wave> blend_waves, light_waves;
  for (int i = 0; i < 3; ++i) blend_waves.push_back(random_wave(rng, short_side, 0.3f, 2.5f, 1.0f));
  for (int i = 0; i < 2; ++i) light_waves.push_back(random_wave(rng, short_side, 0.5f, 4.0f, 0.12f));
  const std::vector<float> blend = wave_field(blend_waves, canvas.width, canvas.height);
  const std::vector<float> light = wave_field(light_waves, canvas.width, canvas.height);
  const Vec2 slope = from_up(rng.angle()) * (rng.uniform(-0.3f, 0.3f) / short_side);
  const float grain = rng.uniform(0.004f, 0.03f);
  Xorshift32 grain_bits(rng.bits());
  const Vec2 middle = {0.5f * static_cast<float>(canvas.width), 0.5f * static_cast<float>(canvas.height)};
  for (int y = 0; y < canvas.height; ++y) {
    for (int x = 0; x < canvas.width; ++x) {
      const size_t i = static_cast<size_t>(y) * static_cast<size_t>(canvas.width) + static_cast<size_t>(x);
      const float t = std::clamp(0.5f + 0.4f * blend[i], 0.0f, 1.0f);
      const Vec2 from_middle = Vec2{static_cast<float>(x), static_cast<float>(y)} - middle;
      const float brightness = 1.0f + light[i] + dot(from_middle, slope);
      const uint32_t bits = grain_bits.next();  // two 16-bit uniforms: a triangular noise
      const float noise = grain * (static_cast<float>((bits & 0xFFFFu) + (bits >> 16)) / 65536.0f - 1.0f);
      const Rgb c = mix(first, second, t) * brightness;
      canvas.at(x, y) = {c.r + noise, c.g + noise, c.b + noise};
    }
  }
  return {first, second};
}

// ---- figures: the animals and the distractors ---------------------------------------------------

// A set of parts painted in one colour; a figure is a few layers painted in order.
struct Layer {
  std::vector<Part> parts;
  Rgb colour;
  bool textured = true;  // shading and stripes (the eyes and nose are flat)
};

struct Figure {
  std::vector<Layer> layers;
  Vec2 centre;            // where the figure's origin lands, in pixels
  float scale = 1;        // pixels per figure unit
  float cos_a = 1, sin_a = 0;  // its tilt
  float mirror = 1;       // -1 flips it left to right
  Vec2 light;             // shading: brightness 1 + dot(q, light) at the figure point q
  Vec2 stripe_wave;       // stripes run across this direction, its length the angular frequency
  float stripes = 0;      // how dark the stripes are (0: none)
};

// A body under the head, as both classes sometimes have.
void maybe_add_body(Stream& rng, std::vector<Part>& parts) {
  if (rng.chance(0.4f)) {
    parts.push_back(ellipse({rng.uniform(-0.08f, 0.08f), 0.78f},
                            {rng.uniform(0.26f, 0.34f), rng.uniform(0.30f, 0.40f)},
                            rng.degrees(-15, 15)));
  }
}

// Two eyes (and, for a dog, a nose), dark or light against the coat.
Layer face_marks(Stream& rng, const std::vector<Vec2>& spots, float radius, Rgb coat) {
  Layer marks;
  marks.textured = false;
  marks.colour = luma(coat) > 0.35f ? coat * rng.uniform(0.1f, 0.3f) : Rgb{0.9f, 0.9f, 0.85f};
  for (Vec2 spot : spots) marks.parts.push_back(circle(spot, radius * rng.uniform(0.85f, 1.15f)));
  return marks;
}

// A cat: a round head with two pointed ears on top (their tips well above the head).
std::vector<Layer> cat_layers(Stream& rng, Rgb coat) {
  Layer body;
  maybe_add_body(rng, body.parts);
  const Vec2 head = {0, 0.12f};
  const float r = rng.uniform(0.31f, 0.36f);
  body.parts.push_back(circle(head, r));
  body.colour = coat;

  Layer ears;
  ears.colour = coat * rng.uniform(0.45f, 0.85f);
  for (float side : {-1.0f, 1.0f}) {
    // The ear leans out by `lean` from straight up; its base spans `half_base` either side of
    // that direction on the head's rim, its tip stands 1.75-2.15 head radii from the centre.
    const float lean = side * rng.degrees(28, 45), half_base = rng.degrees(20, 28);
    const Vec2 base_a = head + from_up(lean - half_base) * (0.9f * r);
    const Vec2 base_b = head + from_up(lean + half_base) * (0.9f * r);
    const Vec2 tip = head + from_up(lean + rng.degrees(-5, 5)) * (r * rng.uniform(1.75f, 2.15f));
    ears.parts.push_back(triangle(base_a, base_b, tip));
  }
  std::vector<Layer> layers = {body, ears};
  if (rng.chance(0.75f)) {
    const float eye_gap = rng.uniform(0.11f, 0.15f);
    layers.push_back(face_marks(rng, {head + Vec2{-eye_gap, -0.02f}, head + Vec2{eye_gap, -0.02f}},
                                0.05f, coat));
  }
  return layers;
}

// A dog seen from the front: a long head with a muzzle below, two long rounded ears hanging
// along its sides; nothing sticks up above the head's round top.
std::vector<Layer> dog_front_layers(Stream& rng, Rgb coat) {
  Layer body;
  maybe_add_body(rng, body.parts);
  body.parts.push_back(ellipse({0, 0.05f}, {rng.uniform(0.27f, 0.31f), rng.uniform(0.33f, 0.38f)}, 0));
  body.parts.push_back(ellipse({0, 0.28f}, {rng.uniform(0.15f, 0.19f), rng.uniform(0.12f, 0.15f)}, 0));
  body.colour = coat;

  Layer ears;
  ears.colour = coat * rng.uniform(0.45f, 0.85f);
  const float ear_length = rng.uniform(0.27f, 0.34f), ear_width = rng.uniform(0.09f, 0.12f);
  for (float side : {-1.0f, 1.0f}) {
    // The ear's lower end swings out by `swing`: turning the ellipse by -side * swing does it.
    const float swing = rng.degrees(8, 25);
    ears.parts.push_back(ellipse({side * rng.uniform(0.26f, 0.30f), 0.17f}, {ear_width, ear_length},
                                 -side * swing));
  }
  std::vector<Layer> layers = {body, ears};
  if (rng.chance(0.75f)) {
    const float eye_gap = rng.uniform(0.10f, 0.13f);
    layers.push_back(face_marks(rng, {{-eye_gap, -0.02f}, {eye_gap, -0.02f}, {0, 0.24f}}, 0.05f, coat));
  }
  return layers;
}

// A dog seen from the side: a head, a snout pointing forward (+x), one ear hanging at the back.
std::vector<Layer> dog_side_layers(Stream& rng, Rgb coat) {
  Layer body;
  maybe_add_body(rng, body.parts);
  body.parts.push_back(ellipse({-0.05f, 0.02f}, {rng.uniform(0.31f, 0.36f), rng.uniform(0.26f, 0.30f)}, 0));
  const float snout_tilt = rng.degrees(-5, 20);
  body.parts.push_back(box({0.29f, 0.10f}, {rng.uniform(0.18f, 0.22f), rng.uniform(0.09f, 0.12f)},
                           snout_tilt, 0.07f));
  body.colour = coat;

  Layer ear;
  ear.colour = coat * rng.uniform(0.45f, 0.85f);
  ear.parts.push_back(ellipse({-0.15f, 0.18f}, {rng.uniform(0.09f, 0.12f), rng.uniform(0.25f, 0.32f)},
                              rng.degrees(-5, 20)));
  std::vector<Layer> layers = {body, ear};
  if (rng.chance(0.75f)) {
    const Vec2 nose = Vec2{0.29f, 0.10f} + Vec2{std::cos(snout_tilt), std::sin(snout_tilt)} * 0.19f;
    layers.push_back(face_marks(rng, {{0.08f, -0.06f}, nose}, 0.045f, coat));
  }
  return layers;
}

// A shape that both classes have: a circle, an ellipse, a triangle, a bar or a rounded rectangle.
std::vector<Layer> distractor_layers(Stream& rng, Rgb colour) {
  Layer shape;
  shape.colour = colour;
  switch (rng.integer(0, 4)) {
    case 0:
      shape.parts.push_back(circle({0, 0}, rng.uniform(0.2f, 0.45f)));
      break;
    case 1:
      shape.parts.push_back(ellipse({0, 0}, {rng.uniform(0.15f, 0.5f), rng.uniform(0.1f, 0.3f)}, rng.angle()));
      break;
    case 2: {
      // A triangle with a corner in each third of the circle, so it never degenerates.
      Vec2 corners[3];
      const float start = rng.angle();
      for (int i = 0; i < 3; ++i) {
        const float a = start + 2.0f * kPi * (static_cast<float>(i) + rng.uniform(-0.2f, 0.2f)) / 3.0f;
        corners[i] = from_up(a) * rng.uniform(0.25f, 0.5f);
      }
      shape.parts.push_back(triangle(corners[0], corners[1], corners[2]));
      break;
    }
    case 3: {
      const Vec2 half = from_up(rng.angle()) * rng.uniform(0.25f, 0.5f);
      shape.parts.push_back(capsule(Vec2{} - half, half, rng.uniform(0.03f, 0.08f)));
      break;
    }
    default:
      shape.parts.push_back(box({0, 0}, {rng.uniform(0.15f, 0.45f), rng.uniform(0.1f, 0.3f)},
                                rng.angle(), rng.uniform(0.0f, 0.1f)));
      break;
  }
  return {shape};
}

enum class Kind { Cat, Dog, Distractor };

// A colour that stands out from both colours of the background (a few tries, then whatever came).
Rgb figure_colour(Stream& rng, const Palette& background) {
  auto stands_out = [&](Rgb c) {
    return std::min(colour_distance(c, background.first), colour_distance(c, background.second)) >= 0.3f;
  };
  Rgb colour = random_colour(rng);
  for (int attempt = 0; attempt < 12 && !stands_out(colour); ++attempt) colour = random_colour(rng);
  return colour;
}

// The first animal of an image is its subject, as in a photograph: large (35%-60% of the short
// side) and near the middle. The others, and the distractors, are 10%-40% and anywhere. A model
// without global pooling, like seed 004's, learns far more easily when the evidence sits where it
// usually is. Measured with the seed-004 CNN: with every animal 10%-60% and anywhere, validation
// stayed at 50% for eight epochs while training accuracy rose to 64%; with a subject (and the
// larger ears of this version) it reached 70% in ten.
enum class Role { Subject, Other };

Figure make_figure(Stream& rng, Kind kind, Role role, const Canvas& canvas, const Palette& background) {
  const float w = static_cast<float>(canvas.width), h = static_cast<float>(canvas.height);
  Figure f;
  const Rgb colour = figure_colour(rng, background);
  switch (kind) {
    case Kind::Cat: f.layers = cat_layers(rng, colour); break;
    case Kind::Dog:
      f.layers = rng.chance(0.5f) ? dog_front_layers(rng, colour) : dog_side_layers(rng, colour);
      break;
    case Kind::Distractor: f.layers = distractor_layers(rng, colour); break;
  }
  if (role == Role::Subject) {
    f.centre = {w * rng.uniform(0.3f, 0.7f), h * rng.uniform(0.35f, 0.65f)};
    f.scale = std::min(w, h) * rng.uniform(0.35f, 0.60f);
  } else {
    f.centre = {w * rng.uniform(0.1f, 0.9f), h * rng.uniform(0.1f, 0.9f)};
    f.scale = std::min(w, h) * rng.uniform(0.10f, 0.40f);
  }
  const float tilt = kind == Kind::Distractor ? 0.0f : rng.degrees(-30, 30);
  f.cos_a = std::cos(tilt);
  f.sin_a = std::sin(tilt);
  f.mirror = rng.chance(0.5f) ? -1.0f : 1.0f;
  f.light = from_up(rng.angle()) * rng.uniform(0.0f, 0.5f);
  if (rng.chance(0.35f)) {
    f.stripes = rng.uniform(0.1f, 0.3f);
    f.stripe_wave = from_up(rng.angle()) * rng.uniform(15.0f, 35.0f);
  }
  return f;
}

// Paints a figure layer by layer. A pixel's coverage comes from the signed distance of its centre
// to the layer's edge, in pixels: 1 well inside, 0 well outside, a one-pixel ramp across the edge.
void paint_figure(Canvas& canvas, const Figure& f) {
  // Figure units -> pixels: mirror, scale, tilt, move. Pixels -> figure units undoes it backwards.
  auto to_pixels = [&](Vec2 q) {
    return f.centre + turn(Vec2{f.mirror * q.x, q.y} * f.scale, f.cos_a, f.sin_a);
  };
  auto to_figure = [&](Vec2 p) {
    const Vec2 q = turn(p - f.centre, f.cos_a, -f.sin_a) * (1.0f / f.scale);
    return Vec2{f.mirror * q.x, q.y};
  };
  for (const Layer& layer : f.layers) {
    // The layer's box in figure units, then the pixel box around its four turned corners.
    Vec2 low = {std::numeric_limits<float>::max(), std::numeric_limits<float>::max()};
    Vec2 high = {-low.x, -low.y};
    for (const Part& part : layer.parts) extend_bounds(part, low, high);
    float x0 = std::numeric_limits<float>::max(), y0 = x0, x1 = -x0, y1 = -x0;
    for (Vec2 corner : {low, high, Vec2{low.x, high.y}, Vec2{high.x, low.y}}) {
      const Vec2 p = to_pixels(corner);
      x0 = std::min(x0, p.x), y0 = std::min(y0, p.y), x1 = std::max(x1, p.x), y1 = std::max(y1, p.y);
    }
    const int first_x = std::max(0, static_cast<int>(std::floor(x0)) - 2);
    const int first_y = std::max(0, static_cast<int>(std::floor(y0)) - 2);
    const int last_x = std::min(canvas.width - 1, static_cast<int>(std::ceil(x1)) + 2);
    const int last_y = std::min(canvas.height - 1, static_cast<int>(std::ceil(y1)) + 2);
    for (int y = first_y; y <= last_y; ++y) {
      for (int x = first_x; x <= last_x; ++x) {
        const Vec2 q = to_figure({static_cast<float>(x) + 0.5f, static_cast<float>(y) + 0.5f});
        float d = std::numeric_limits<float>::max();
        for (const Part& part : layer.parts) d = std::min(d, distance(part, q));
        const float d_pixels = d * f.scale;
        if (d_pixels >= 0.5f) {
          // Outside. The edge is at least d_pixels away, so the next pixels of the row are outside
          // too: skip half of what the distance allows (half, because the ellipse's distance is
          // an estimate away from its edge).
          x += static_cast<int>(0.5f * (d_pixels - 0.5f));
          continue;
        }
        const float coverage = std::min(0.5f - d_pixels, 1.0f);
        Rgb colour = layer.colour;
        if (layer.textured) {
          float shade = 1.0f + dot(q, f.light);
          if (f.stripes > 0) shade *= 1.0f - f.stripes * (0.5f + 0.5f * std::sin(dot(q, f.stripe_wave)));
          colour = colour * shade;
        }
        Rgb& pixel = canvas.at(x, y);
        pixel = mix(pixel, colour, coverage);
      }
    }
  }
}

// ---- JPEG files (libjpeg's compressor) ----------------------------------------------------------

// libjpeg reports an error by calling error_exit, which must not return. Its default prints and
// calls exit(); ours saves the message and jumps back to write_jpeg's setjmp instead.
struct JpegErrorManager {
  jpeg_error_mgr base;  // first member: libjpeg holds a pointer to it
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_error_exit(j_common_ptr cinfo) {
  auto* manager = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, manager->message);
  std::longjmp(manager->jump, 1);
}

// Compresses `samples` (height rows of width * components bytes, in `colour_space`) into `file`.
// Returns false with libjpeg's message in `message` (JMSG_LENGTH_MAX bytes) on an error. Nothing in
// this function has a destructor, so the longjmp from jpeg_error_exit skips no cleanup.
bool write_jpeg(std::FILE* file, const unsigned char* samples, int width, int height, int components,
                J_COLOR_SPACE colour_space, int quality, char* message) {
  jpeg_compress_struct cinfo;
  JpegErrorManager errors;
  cinfo.err = jpeg_std_error(&errors.base);
  errors.base.error_exit = jpeg_error_exit;
  if (setjmp(errors.jump)) {
    std::snprintf(message, JMSG_LENGTH_MAX, "%s", errors.message);
    jpeg_destroy_compress(&cinfo);
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_stdio_dest(&cinfo, file);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = components;
  cinfo.in_color_space = colour_space;
  jpeg_set_defaults(&cinfo);  // YCbCr with 2x2 chroma subsampling for RGB; CMYK stays CMYK
  jpeg_set_quality(&cinfo, quality, TRUE);
  // The Adobe marker tells a reader that the four channels are CMYK (not YCCK) and, by
  // convention, that they are stored inverted (jpeg_set_defaults asks for it too; said here).
  if (colour_space == JCS_CMYK) cinfo.write_Adobe_marker = TRUE;
  jpeg_start_compress(&cinfo, TRUE);
  const size_t stride = static_cast<size_t>(width) * static_cast<size_t>(components);
  while (cinfo.next_scanline < cinfo.image_height) {
    // libjpeg's row type is not const, but the compressor only reads the rows.
    JSAMPROW row = const_cast<JSAMPROW>(samples + cinfo.next_scanline * stride);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}

unsigned char to_byte(float v) {
  return static_cast<unsigned char>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f);
}

enum class FileColour { Rgb, Gray, Cmyk };

// The canvas as the bytes libjpeg takes for the file's colour space.
std::vector<unsigned char> to_samples(const Canvas& canvas, FileColour colour) {
  const size_t components = colour == FileColour::Rgb ? 3 : colour == FileColour::Gray ? 1 : 4;
  std::vector<unsigned char> out(canvas.pixels.size() * components);
  unsigned char* o = out.data();
  for (Rgb p : canvas.pixels) {
    p = {std::clamp(p.r, 0.0f, 1.0f), std::clamp(p.g, 0.0f, 1.0f), std::clamp(p.b, 0.0f, 1.0f)};
    switch (colour) {
      case FileColour::Rgb:
        o[0] = to_byte(p.r), o[1] = to_byte(p.g), o[2] = to_byte(p.b);
        break;
      case FileColour::Gray:
        o[0] = to_byte(luma(p));
        break;
      case FileColour::Cmyk: {
        // Inverted (Adobe) CMYK, the simple way: K = max(R, G, B) stored, and each of C, M, Y is
        // its channel divided by it, so that R = C * K, G = M * K, B = Y * K give the colour back.
        const float k = std::max({p.r, p.g, p.b});
        const float inv = k > 0 ? 1.0f / k : 0.0f;
        o[0] = to_byte(k > 0 ? p.r * inv : 1.0f), o[1] = to_byte(k > 0 ? p.g * inv : 1.0f);
        o[2] = to_byte(k > 0 ? p.b * inv : 1.0f), o[3] = to_byte(k);
        break;
      }
    }
    o += components;
  }
  return out;
}

// ---- the tree -----------------------------------------------------------------------------------

struct Settings {
  fs::path out;
  int train_per_class = 1000;
  int validation_per_class = 400;
  uint64_t seed = 42;
  int min_size = 100, max_size = 500;
  int quality_min = 50, quality_max = 95;
  bool force = false;
};

// One file to write. The first `train_per_class` numbers go to train/, the next ones to
// validation/, as the Keras blog split Kaggle's numbered files.
struct Job {
  int split;  // 0: train, 1: validation
  int label;  // 0: cats, 1: dogs (alphabetical, as Keras' and PyTorch's folder readers number them)
  int index;  // within its split and class: the random stream's key
  int number; // in the file name
};

const char* const kSplits[] = {"train", "validation"};
const char* const kClassFolders[] = {"cats", "dogs"};
const char* const kClassNames[] = {"cat", "dog"};

fs::path job_path(const Settings& s, const Job& job) {
  return s.out / kSplits[job.split] / kClassFolders[job.label] /
         (std::string(kClassNames[job.label]) + "." + std::to_string(job.number) + ".jpg");
}

struct Written {
  uintmax_t bytes = 0;
  FileColour colour = FileColour::Rgb;
};

// Draws one image and writes it. Throws Failure when the file cannot be written.
Written make_image(const Settings& s, const Job& job) {
  const uint64_t image_id = (static_cast<uint64_t>(job.split) << 48) |
                            (static_cast<uint64_t>(job.label) << 40) | static_cast<uint64_t>(job.index);
  Stream rng(s.seed, image_id);
  Canvas canvas;
  canvas.width = rng.integer(s.min_size, s.max_size);
  canvas.height = rng.integer(s.min_size, s.max_size);
  canvas.pixels.resize(static_cast<size_t>(canvas.width) * static_cast<size_t>(canvas.height));
  const int quality = rng.integer(s.quality_min, s.quality_max);
  const float colour_draw = rng.uniform();
  const FileColour colour = colour_draw < 0.01f   ? FileColour::Cmyk
                            : colour_draw < 0.06f ? FileColour::Gray
                                                  : FileColour::Rgb;

  const Palette background = paint_background(canvas, rng);
  const Kind animal = job.label == 0 ? Kind::Cat : Kind::Dog;
  const Figure subject = make_figure(rng, animal, Role::Subject, canvas, background);
  std::vector<Figure> others;
  const int more_animals = rng.integer(0, 2), distractors = rng.integer(0, 2);
  for (int i = 0; i < more_animals; ++i) {
    others.push_back(make_figure(rng, animal, Role::Other, canvas, background));
  }
  for (int i = 0; i < distractors; ++i) {
    others.push_back(make_figure(rng, Kind::Distractor, Role::Other, canvas, background));
  }
  // The others in a random order (Fisher-Yates), so distractors hide animals and the other way
  // round; the subject last, in front of everything.
  for (size_t i = others.size(); i > 1; --i) {
    std::swap(others[i - 1], others[static_cast<size_t>(rng.integer(0, static_cast<int>(i) - 1))]);
  }
  for (const Figure& f : others) paint_figure(canvas, f);
  paint_figure(canvas, subject);

  const std::vector<unsigned char> samples = to_samples(canvas, colour);
  const int components = colour == FileColour::Rgb ? 3 : colour == FileColour::Gray ? 1 : 4;
  const J_COLOR_SPACE space = colour == FileColour::Rgb    ? JCS_RGB
                              : colour == FileColour::Gray ? JCS_GRAYSCALE
                                                           : JCS_CMYK;
  const fs::path path = job_path(s, job);
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    throw Failure("cannot create " + path.string() + " (" + std::strerror(errno) + ")");
  }
  char message[JMSG_LENGTH_MAX] = "";
  const bool encoded = write_jpeg(file, samples.data(), canvas.width, canvas.height, components, space,
                                  quality, message);
  const bool closed = std::fclose(file) == 0;
  if (!encoded) throw Failure("libjpeg failed on " + path.string() + ": " + message);
  if (!closed) throw Failure("cannot finish writing " + path.string() + " (disk full?)");
  return {fs::file_size(path), colour};
}

// A file this program writes: cat.N.jpg or dog.N.jpg.
bool is_generated_name(const std::string& name) {
  const std::string ext = ".jpg";
  if (name.size() <= 4 + ext.size() || name.compare(name.size() - ext.size(), ext.size(), ext) != 0) {
    return false;
  }
  if (name.compare(0, 4, "cat.") != 0 && name.compare(0, 4, "dog.") != 0) return false;
  const std::string digits = name.substr(4, name.size() - 4 - ext.size());
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Refuses a non-empty train/ or validation/ without --force; with it, removes the files an earlier
// run wrote (cat.N.jpg, dog.N.jpg in the class folders) so that the tree holds exactly this run's
// images, and leaves anything else alone. Then makes the four class folders.
void prepare_folders(const Settings& s) {
  if (fs::exists(s.out) && !fs::is_directory(s.out)) {
    throw Failure(s.out.string() + " exists and is not a folder");
  }
  uintmax_t removed = 0;
  for (const char* split : kSplits) {
    const fs::path folder = s.out / split;
    if (!fs::exists(folder)) continue;
    if (!fs::is_directory(folder)) throw Failure(folder.string() + " exists and is not a folder");
    if (fs::is_empty(folder)) continue;
    if (!s.force) {
      throw Failure(folder.string() + " is not empty; pass --force to replace the images an " +
                    "earlier run wrote there (cat.N.jpg, dog.N.jpg)");
    }
    for (const char* class_folder : kClassFolders) {
      const fs::path images = folder / class_folder;
      if (!fs::is_directory(images)) continue;
      std::vector<fs::path> stale;
      for (const fs::directory_entry& entry : fs::directory_iterator(images)) {
        if (entry.is_regular_file() && is_generated_name(entry.path().filename().string())) {
          stale.push_back(entry.path());
        }
      }
      for (const fs::path& path : stale) removed += fs::remove(path) ? 1 : 0;
    }
  }
  if (removed > 0) std::cout << "--force: removed " << removed << " images of an earlier tree\n";
  for (const char* split : kSplits) {
    for (const char* class_folder : kClassFolders) fs::create_directories(s.out / split / class_folder);
  }
}

// A note beside train/ and validation/ that the tree is synthetic, with what made it: an app that
// reads the tree can say so in its output.
void write_note(const Settings& s) {
  const fs::path path = s.out / "SYNTHETIC.txt";
  std::ofstream note(path);
  note << "Synthetic Dogs-vs-Cats stand-in, NOT Kaggle's photographs: cats are round heads with\n"
       << "pointed ears, dogs long heads with hanging ears, on random smooth backgrounds.\n"
       << "Written by make_dogs_cats (datasets/make_dogs_cats.cpp) with --train-per-class "
       << s.train_per_class << " --validation-per-class " << s.validation_per_class << " --seed "
       << s.seed << " --min-size " << s.min_size << " --max-size " << s.max_size
       << " --quality-min " << s.quality_min << " --quality-max " << s.quality_max << "\n";
  // Closed before the check: a full disk shows only when the buffered text reaches it.
  note.close();
  if (!note) throw Failure("cannot write " + path.string() + " (" + std::strerror(errno) + ")");
}

int run(const Settings& s) {
  if (s.min_size > s.max_size) {
    throw Failure("--min-size " + std::to_string(s.min_size) + " is above --max-size " +
                  std::to_string(s.max_size));
  }
  if (s.quality_min > s.quality_max) {
    throw Failure("--quality-min " + std::to_string(s.quality_min) + " is above --quality-max " +
                  std::to_string(s.quality_max));
  }
  prepare_folders(s);
  write_note(s);

  std::vector<Job> jobs;
  for (int split = 0; split < 2; ++split) {
    const int count = split == 0 ? s.train_per_class : s.validation_per_class;
    const int first_number = split == 0 ? 0 : s.train_per_class;
    for (int label = 0; label < 2; ++label) {
      for (int i = 0; i < count; ++i) jobs.push_back({split, label, i, first_number + i});
    }
  }
  const int total = static_cast<int>(jobs.size());
  std::cout << "Writing " << total << " synthetic JPEG images (" << 2 * s.train_per_class
            << " train, " << 2 * s.validation_per_class << " validation, half cats, half dogs) into "
            << s.out.string() << " with " << omp_get_max_threads() << " threads, seed " << s.seed
            << std::endl;

  const auto start = std::chrono::steady_clock::now();
  std::atomic<int> done{0}, grays{0}, cmyks{0};
  std::atomic<uintmax_t> bytes{0};
  std::atomic<bool> failed{false};
  std::string error;
  // Images differ in size, so threads take them one at a time (dynamic schedule).
#pragma omp parallel for schedule(dynamic, 1)
  for (int i = 0; i < total; ++i) {
    if (failed) continue;  // an OpenMP loop cannot break: skip the rest after an error
    try {
      const Written w = make_image(s, jobs[static_cast<size_t>(i)]);
      bytes += w.bytes;
      if (w.colour == FileColour::Gray) ++grays;
      if (w.colour == FileColour::Cmyk) ++cmyks;
    } catch (const std::exception& e) {
#pragma omp critical(first_error)
      if (!failed.exchange(true)) error = e.what();
      continue;
    }
    const int finished = ++done;
    if (finished * 10 / total != (finished - 1) * 10 / total) {  // crossed a tenth
#pragma omp critical(progress)
      std::cout << "  " << finished << "/" << total << " images" << std::endl;
    }
  }
  if (failed) throw Failure(error);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  char summary[256];
  std::snprintf(summary, sizeof summary,
                "Wrote %d JPEG files (%d grayscale, %d CMYK), %.1f MB, in %.2f s (%.0f images/s).",
                total, grays.load(), cmyks.load(), static_cast<double>(bytes.load()) / 1e6, seconds,
                seconds > 0 ? total / seconds : 0.0);
  std::cout << summary << "\nThese are synthetic images, not Kaggle's photographs (see "
            << (s.out / "SYNTHETIC.txt").string() << ").\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes a synthetic Dogs-vs-Cats JPEG tree (train/ and validation/, cats/ and dogs/) "
               "for machines without Kaggle's photographs",
               "make_dogs_cats"};
  Settings s;
  std::string out;
  app.add_option("--out", out, "the folder to write train/ and validation/ into")->required();
  app.add_option("--train-per-class", s.train_per_class, "training images per class")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--validation-per-class", s.validation_per_class, "validation images per class")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--seed", s.seed, "the same seed writes the same images")->capture_default_str();
  app.add_option("--min-size", s.min_size, "smallest width or height in pixels (each drawn apart)")
      ->check(CLI::Range(16, 4096))
      ->capture_default_str();
  app.add_option("--max-size", s.max_size, "largest width or height in pixels")
      ->check(CLI::Range(16, 4096))
      ->capture_default_str();
  app.add_option("--quality-min", s.quality_min, "lowest JPEG quality (drawn per image)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--quality-max", s.quality_max, "highest JPEG quality")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_flag("--force", s.force,
               "write into a non-empty train/ or validation/, replacing the cat.N.jpg and dog.N.jpg "
               "files there (other files are left alone)");
  app.footer("Grayscale (~5%) and CMYK (~1%) files are mixed in to exercise a reader's colour "
             "conversions. The images are described at the top of datasets/make_dogs_cats.cpp.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << app.get_name() << ": " << e.what() << "\n";
    return 2;
  }
  try {
    s.out = out;
    return run(s);
  } catch (const std::exception& e) {
    std::cerr << app.get_name() << ": " << e.what() << "\n";
    return 2;
  }
}
