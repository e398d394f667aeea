// Tensor: a shared handle to contiguous memory on one device, with a shape, a dtype and the
// autograd fields (requires_grad, grad, grad_fn). Copying a Tensor copies the handle, not
// the data; `clone()` copies the data.
//
// Views (`view`, `slice`) share storage with an element offset. They are how a model's
// layers see their slices of the one contiguous parameter buffer.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/device.h"
#include "core/shape.h"

namespace engine {

// U8 holds raw image bytes (datasets keep their pixels as uint8, 4x smaller than float32);
// only copies, gather_rows, fill and augment_images take it, every float op refuses it.
enum class DType { F32, I32, U8 };
const char* to_string(DType dtype);
size_t element_size(DType dtype);  // 4, 4, 1
// A value stored into a uint8 tensor (fill): truncated toward zero like the int32 conversion
// and saturated to [0, 255]; NaN gives 0.
inline uint8_t saturate_u8(float value) {
  return value > 0.0f ? static_cast<uint8_t>(value < 255.0f ? value : 255.0f) : uint8_t{0};
}

class DeviceServices;
class Node;

// A block of device memory returned to its device's allocator when the last user goes.
struct Storage {
  Storage(DeviceServices& services, size_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  DeviceServices& services;
  void* data;
  size_t bytes;
};

class Tensor;

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;  // in elements
  Shape shape;
  DType dtype = DType::F32;
  bool requires_grad = false;
  std::shared_ptr<Tensor> grad;     // accumulated by backward() on leaves
  bool overwrite_grad = false;      // the next gradient replaces grad instead of adding to it
  std::shared_ptr<Node> grad_fn;    // the op that produced this tensor, if recorded
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor: no storage, used for "no gradient"

  static Tensor empty(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor zeros(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor full(const Shape& shape, float value, Device device = Device::cpu());
  static Tensor from_vector(const std::vector<float>& values, const Shape& shape,
                            Device device = Device::cpu());
  static Tensor from_ints(const std::vector<int32_t>& values, const Shape& shape,
                          Device device = Device::cpu());
  static Tensor from_bytes(const std::vector<uint8_t>& values, const Shape& shape,
                           Device device = Device::cpu());

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  int64_t dim(int i) const;  // negative i counts from the end
  int ndim() const { return static_cast<int>(shape().size()); }
  int64_t numel() const { return engine::numel(shape()); }
  std::vector<int64_t> strides() const { return contiguous_strides(shape()); }
  DType dtype() const;
  Device device() const;
  DeviceServices& services() const;  // its device's memory, copies and settings
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(dtype()); }

  // Raw pointer to the first element on the tensor's device; checks the dtype.
  template <typename T>
  T* data() const;
  void* raw_data() const;

  // Host copies of the contents (synchronous); item() needs exactly one element.
  std::vector<float> to_vector() const;
  std::vector<int32_t> to_int_vector() const;
  std::vector<uint8_t> to_bytes() const;  // of a uint8 tensor
  float item() const;

  Tensor to(Device device) const;  // a copy on `device` (this tensor itself if already there)
  Tensor clone() const;            // a copy on the same device, no autograd history
  Tensor detach() const;           // same storage, no autograd history
  Tensor view(const Shape& shape) const;                // same storage, no autograd
  Tensor slice(int64_t offset, const Shape& shape) const;  // elements [offset, offset+numel)
  void copy_from(const Tensor& src);                    // same shape/dtype, any devices

  // Autograd.
  bool requires_grad() const;
  Tensor& set_requires_grad(bool value);
  Tensor grad() const;  // undefined until backward() reaches this leaf
  void set_grad(const Tensor& grad);
  // Marks the gradient buffer as dead: the next backward() writes this leaf's gradient into
  // it instead of adding to it, so zeroing costs nothing and the op that produces the
  // gradient writes it in place (no separate zero fill, no separate add).
  void set_overwrite_grad(bool value);
  bool overwrite_grad() const;
  const std::shared_ptr<Node>& grad_fn() const;
  void set_grad_fn(std::shared_ptr<Node> node);
  void backward() const;  // this must hold one element; seeds the gradient with 1

  bool same_storage(const Tensor& other) const;

 private:
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  TensorImpl& impl() const;
  std::shared_ptr<TensorImpl> impl_;
};

template <>
float* Tensor::data<float>() const;
template <>
int32_t* Tensor::data<int32_t>() const;
template <>
uint8_t* Tensor::data<uint8_t>() const;

}  // namespace engine
