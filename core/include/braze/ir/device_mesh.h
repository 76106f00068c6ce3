#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace braze {

/// The devices a sharded tensor is spread over: one id per rank (the rank's CUDA device in the
/// multi-device runtime), arranged as a 1-D or 2-D grid in row-major order. A tensor's axis
/// parallelized as ParallelType::DIDx is split over the mesh's last dim, DIDy over its first
/// (braze/ir/sharding.h).
class DeviceMesh {
 public:
  /// A 1-D mesh of `devices`.
  explicit DeviceMesh(std::vector<int64_t> devices);
  /// `devices` laid out row-major over `shape` (one or two dims whose product is their count).
  /// Refuses an empty mesh, a negative or repeated id and a shape that does not fit.
  DeviceMesh(std::vector<int64_t> devices, std::vector<int64_t> shape);
  /// The 1-D mesh of devices 0 .. n - 1.
  static DeviceMesh ofSize(int64_t n);

  const std::vector<int64_t>& devices() const { return devices_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t numDims() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size() const { return static_cast<int64_t>(devices_.size()); }
  /// Devices along mesh dim `dim`.
  int64_t size(int64_t dim) const;
  bool has(int64_t device) const;
  /// `device`'s position along each mesh dim; refused for a device outside the mesh.
  std::vector<int64_t> coordinatesOf(int64_t device) const;

  /// "mesh{0, 1, 2, 3}" (1-D) or "mesh[2, 2]{0, 1, 2, 3}" (2-D).
  std::string toString() const;
  bool operator==(const DeviceMesh&) const = default;

 private:
  std::vector<int64_t> devices_;
  std::vector<int64_t> shape_;
};

}  // namespace braze
