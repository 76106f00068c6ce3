#include "support/random_tensor.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "support/multi_index.h"
#include "support/tensor_values.h"

namespace braze::test {
namespace {

double sentinelFor(DataType dtype) {
  return isFloatingPoint(dtype) ? NAN : -777.0;
}

}  // namespace

double RandomTensors::value(double low, double high) {
  return std::uniform_real_distribution<double>(low, high)(engine_);
}

int64_t RandomTensors::integer(int64_t low, int64_t high) {
  return std::uniform_int_distribution<int64_t>(low, high)(engine_);
}

double RandomTensors::draw(DataType dtype, double low, double high) {
  if (isBoolean(dtype)) return static_cast<double>(integer(0, 1));
  if (!isFloatingPoint(dtype)) {
    return static_cast<double>(
        integer(static_cast<int64_t>(std::ceil(low)), static_cast<int64_t>(std::floor(high))));
  }
  return roundTo(dtype, value(low, high));
}

HostTensor RandomTensors::uniform(DataType dtype, std::vector<int64_t> sizes, double low,
                                  double high) {
  std::vector<double> values(static_cast<size_t>(numelOf(sizes)));
  for (double& v : values) v = draw(dtype, low, high);
  const bool all_zero = std::all_of(values.begin(), values.end(), [](double v) { return v == 0; });
  if (!values.empty() && all_zero) {
    values[static_cast<size_t>(integer(0, static_cast<int64_t>(values.size()) - 1))] =
        isBoolean(dtype) ? 1.0 : roundTo(dtype, high != 0 ? high : low);
  }
  return tensorOf(dtype, std::move(sizes), values);
}

HostTensor RandomTensors::nonZero(DataType dtype, std::vector<int64_t> sizes, double low,
                                  double high, double min_abs) {
  std::vector<double> values(static_cast<size_t>(numelOf(sizes)));
  for (double& v : values) {
    // Rejection sampling; the range is required to hold acceptable values.
    do {
      v = draw(dtype, low, high);
    } while (std::fabs(v) < min_abs || v == 0);
  }
  return tensorOf(dtype, std::move(sizes), values);
}

std::vector<int64_t> RandomTensors::permutation(int64_t rank) {
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  std::iota(dims.begin(), dims.end(), 0);
  if (rank < 2) return dims;
  do {
    std::shuffle(dims.begin(), dims.end(), engine_);
  } while (std::is_sorted(dims.begin(), dims.end()));
  return dims;
}

namespace {

/// An uninitialised buffer for logical `sizes` stored in `allocation_order`, with dim `dim`
/// (when >= 0) spaced `step` elements apart, viewed with the logical dim order.
HostTensor storageView(DataType dtype, const std::vector<int64_t>& sizes,
                       const std::vector<int64_t>& allocation_order, int64_t dim, int64_t step,
                       double fill) {
  std::vector<int64_t> storage_sizes;
  std::vector<int64_t> inverse(allocation_order.size());
  int64_t storage_dim = -1;
  for (size_t position = 0; position < allocation_order.size(); ++position) {
    const int64_t logical = allocation_order[position];
    storage_sizes.push_back(sizes[logical] * (logical == dim ? step : 1));
    inverse[logical] = static_cast<int64_t>(position);
    if (logical == dim) storage_dim = static_cast<int64_t>(position);
  }
  HostTensor storage = HostTensor::empty(dtype, storage_sizes);
  writeValues(storage, std::vector<double>(static_cast<size_t>(numelOf(storage_sizes)), fill));
  if (storage_dim >= 0) storage = storage.strided(storage_dim, 0, step);
  // Storage dims are in allocation order; permuting by the inverse gives the logical dims.
  return storage.permuted(inverse);
}

std::vector<int64_t> identityOrder(int64_t rank) {
  std::vector<int64_t> order(static_cast<size_t>(rank));
  std::iota(order.begin(), order.end(), 0);
  return order;
}

}  // namespace

HostTensor withAllocationOrder(const HostTensor& tensor,
                               const std::vector<int64_t>& allocation_order) {
  HostTensor view = storageView(tensor.dtype(), tensor.sizes(), allocation_order, -1, 1,
                                sentinelFor(tensor.dtype()));
  writeValues(view, valuesOf(tensor));
  return view;
}

HostTensor withGaps(const HostTensor& tensor, int64_t dim, int64_t step,
                    std::vector<int64_t> allocation_order) {
  if (allocation_order.empty()) allocation_order = identityOrder(tensor.rank());
  HostTensor view = storageView(tensor.dtype(), tensor.sizes(), allocation_order, dim, step,
                                sentinelFor(tensor.dtype()));
  writeValues(view, valuesOf(tensor));
  return view;
}

}  // namespace braze::test
