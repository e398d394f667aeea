#include "core/tensor.h"

#include <cstring>

#include "core/autograd.h"
#include "core/device_services.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "core/ops/elementwise.h"

namespace engine {

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::F32: return "float32";
    case DType::I32: return "int32";
    case DType::U8: return "uint8";
  }
  return "unknown dtype";
}

size_t element_size(DType dtype) { return dtype == DType::U8 ? 1 : 4; }

Storage::Storage(DeviceServices& owner, size_t size)
    : services(owner), data(owner.allocator().allocate(size)), bytes(size) {}

Storage::~Storage() { services.allocator().deallocate(data, bytes); }

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  const size_t bytes = static_cast<size_t>(engine::numel(shape)) * element_size(dtype);
  impl->storage = std::make_shared<Storage>(device_services(device), bytes);
  return Tensor(std::move(impl));
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  raw::fill(t, 0.0f);
  return t;
}

Tensor Tensor::full(const Shape& shape, float value, Device device) {
  Tensor t = empty(shape, DType::F32, device);
  raw::fill(t, value);
  return t;
}

Tensor Tensor::from_vector(const std::vector<float>& values, const Shape& shape, Device device) {
  ENGINE_CHECK(static_cast<int64_t>(values.size()) == engine::numel(shape), "from_vector: ",
               values.size(), " values do not fill shape ", to_string(shape));
  Tensor t = empty(shape, DType::F32, device);
  copy_bytes(t.services(), Copy::host_to_device, t.raw_data(), values.data(), t.nbytes());
  return t;
}

Tensor Tensor::from_ints(const std::vector<int32_t>& values, const Shape& shape, Device device) {
  ENGINE_CHECK(static_cast<int64_t>(values.size()) == engine::numel(shape), "from_ints: ",
               values.size(), " values do not fill shape ", to_string(shape));
  Tensor t = empty(shape, DType::I32, device);
  copy_bytes(t.services(), Copy::host_to_device, t.raw_data(), values.data(), t.nbytes());
  return t;
}

Tensor Tensor::from_bytes(const std::vector<uint8_t>& values, const Shape& shape, Device device) {
  ENGINE_CHECK(static_cast<int64_t>(values.size()) == engine::numel(shape), "from_bytes: ",
               values.size(), " values do not fill shape ", to_string(shape));
  Tensor t = empty(shape, DType::U8, device);
  copy_bytes(t.services(), Copy::host_to_device, t.raw_data(), values.data(), t.nbytes());
  return t;
}

TensorImpl& Tensor::impl() const {
  ENGINE_CHECK(impl_ != nullptr, "use of an undefined tensor");
  return *impl_;
}

const Shape& Tensor::shape() const { return impl().shape; }

int64_t Tensor::dim(int i) const {
  const int n = ndim();
  const int k = i < 0 ? i + n : i;
  ENGINE_CHECK(k >= 0 && k < n, "dimension ", i, " out of range for shape ", to_string(shape()));
  return shape()[static_cast<size_t>(k)];
}

DType Tensor::dtype() const { return impl().dtype; }
Device Tensor::device() const { return impl().storage->services.device(); }
DeviceServices& Tensor::services() const { return impl().storage->services; }

void* Tensor::raw_data() const {
  const TensorImpl& t = impl();
  return static_cast<char*>(t.storage->data) + t.offset * static_cast<int64_t>(element_size(t.dtype));
}

template <>
float* Tensor::data<float>() const {
  ENGINE_CHECK(dtype() == DType::F32, "expected a float32 tensor, got ", to_string(dtype()));
  return static_cast<float*>(raw_data());
}

template <>
int32_t* Tensor::data<int32_t>() const {
  ENGINE_CHECK(dtype() == DType::I32, "expected an int32 tensor, got ", to_string(dtype()));
  return static_cast<int32_t*>(raw_data());
}

template <>
uint8_t* Tensor::data<uint8_t>() const {
  ENGINE_CHECK(dtype() == DType::U8, "expected a uint8 tensor, got ", to_string(dtype()));
  return static_cast<uint8_t*>(raw_data());
}

std::vector<float> Tensor::to_vector() const {
  std::vector<float> out(static_cast<size_t>(numel()));
  copy_bytes(services(), Copy::device_to_host, out.data(), data<float>(), nbytes());
  return out;
}

std::vector<int32_t> Tensor::to_int_vector() const {
  std::vector<int32_t> out(static_cast<size_t>(numel()));
  copy_bytes(services(), Copy::device_to_host, out.data(), data<int32_t>(), nbytes());
  return out;
}

std::vector<uint8_t> Tensor::to_bytes() const {
  std::vector<uint8_t> out(static_cast<size_t>(numel()));
  copy_bytes(services(), Copy::device_to_host, out.data(), data<uint8_t>(), nbytes());
  return out;
}

float Tensor::item() const {
  ENGINE_CHECK(numel() == 1, "item() needs a tensor of one element, got shape ",
               to_string(shape()));
  return to_vector()[0];
}

void Tensor::copy_from(const Tensor& src) {
  ENGINE_CHECK(src.shape() == shape() && src.dtype() == dtype(), "copy_from: shape ",
               to_string(src.shape()), " ", to_string(src.dtype()), " into ", to_string(shape()),
               " ", to_string(dtype()));
  if (src.device() == device()) {
    copy_bytes(services(), Copy::within_device, raw_data(), src.raw_data(), nbytes());
  } else if (src.device().is_cpu()) {
    copy_bytes(services(), Copy::host_to_device, raw_data(), src.raw_data(), nbytes());
  } else if (device().is_cpu()) {
    copy_bytes(src.services(), Copy::device_to_host, raw_data(), src.raw_data(), nbytes());
  } else {
    std::vector<char> staging(nbytes());
    copy_bytes(src.services(), Copy::device_to_host, staging.data(), src.raw_data(), nbytes());
    copy_bytes(services(), Copy::host_to_device, raw_data(), staging.data(), nbytes());
  }
}

Tensor Tensor::to(Device target) const {
  if (target == device()) return *this;
  Tensor out = empty(shape(), dtype(), target);
  out.copy_from(*this);
  return out;
}

Tensor Tensor::clone() const {
  Tensor out = empty(shape(), dtype(), device());
  out.copy_from(*this);
  return out;
}

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = impl_->storage;
  impl->offset = impl_->offset;
  impl->shape = impl_->shape;
  impl->dtype = impl_->dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::view(const Shape& new_shape) const {
  ENGINE_CHECK(engine::numel(new_shape) == numel(), "cannot view shape ", to_string(shape()),
               " as ", to_string(new_shape));
  Tensor out = detach();
  out.impl_->shape = new_shape;
  return out;
}

Tensor Tensor::slice(int64_t offset, const Shape& new_shape) const {
  ENGINE_CHECK(offset >= 0 && offset + engine::numel(new_shape) <= numel(), "slice of ",
               engine::numel(new_shape), " elements at ", offset, " exceeds ", numel());
  Tensor out = detach();
  out.impl_->offset += offset;
  out.impl_->shape = new_shape;
  return out;
}

bool Tensor::requires_grad() const { return impl().requires_grad; }

Tensor& Tensor::set_requires_grad(bool value) {
  ENGINE_CHECK(!value || dtype() == DType::F32, "only float tensors can require gradients");
  impl().requires_grad = value;
  return *this;
}

Tensor Tensor::grad() const { return impl().grad ? *impl().grad : Tensor(); }

void Tensor::set_grad(const Tensor& grad) {
  if (!grad.defined()) {
    impl().grad.reset();
    return;
  }
  ENGINE_CHECK(grad.shape() == shape(), "gradient shape ", to_string(grad.shape()),
               " does not match tensor shape ", to_string(shape()));
  impl().grad = std::make_shared<Tensor>(grad);
}

void Tensor::set_overwrite_grad(bool value) { impl().overwrite_grad = value; }
bool Tensor::overwrite_grad() const { return impl().overwrite_grad; }

const std::shared_ptr<Node>& Tensor::grad_fn() const { return impl().grad_fn; }

void Tensor::set_grad_fn(std::shared_ptr<Node> node) {
  impl().grad_fn = std::move(node);
  impl().requires_grad = true;
}

void Tensor::backward() const { engine::backward(*this); }

bool Tensor::same_storage(const Tensor& other) const {
  return defined() && other.defined() && impl_->storage == other.impl_->storage;
}

}  // namespace engine
