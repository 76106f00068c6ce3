// DeviceMesh: the devices of a sharded tensor as a 1-D or 2-D grid.

#include "braze/ir/device_mesh.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>

#include "braze/error.h"

namespace braze {

namespace {

std::string listed(const std::vector<int64_t>& values) {
  std::ostringstream os;
  for (size_t i = 0; i < values.size(); ++i) os << (i > 0 ? ", " : "") << values[i];
  return os.str();
}

}  // namespace

DeviceMesh::DeviceMesh(std::vector<int64_t> devices)
    : DeviceMesh(devices, {static_cast<int64_t>(devices.size())}) {}

DeviceMesh::DeviceMesh(std::vector<int64_t> devices, std::vector<int64_t> shape)
    : devices_(std::move(devices)), shape_(std::move(shape)) {
  BRAZE_USER_CHECK(!devices_.empty()) << "DeviceMesh: a mesh needs at least one device";
  BRAZE_USER_CHECK(shape_.size() == 1 || shape_.size() == 2)
      << "DeviceMesh: a mesh has one or two dims, not " << shape_.size() << " ([" << listed(shape_)
      << "])";
  std::set<int64_t> seen;
  for (size_t i = 0; i < devices_.size(); ++i) {
    BRAZE_USER_CHECK(devices_[i] >= 0)
        << "DeviceMesh: device " << i << " of {" << listed(devices_) << "} is " << devices_[i]
        << "; device ids are ranks' devices, 0 or more";
    BRAZE_USER_CHECK(seen.insert(devices_[i]).second)
        << "DeviceMesh: device " << devices_[i] << " appears twice in {" << listed(devices_)
        << "}; each device holds one place of the mesh";
  }
  const int64_t product = std::accumulate(shape_.begin(), shape_.end(), int64_t{1},
                                          [](int64_t a, int64_t b) { return a * b; });
  BRAZE_USER_CHECK(std::all_of(shape_.begin(), shape_.end(), [](int64_t n) { return n > 0; }) &&
                   product == size())
      << "DeviceMesh: shape [" << listed(shape_) << "] does not hold the " << size() << " devices {"
      << listed(devices_) << "}; give a shape whose product is " << size();
}

DeviceMesh DeviceMesh::ofSize(int64_t n) {
  BRAZE_USER_CHECK(n >= 1) << "DeviceMesh::ofSize(" << n << "): a mesh needs at least one device";
  std::vector<int64_t> devices(static_cast<size_t>(n));
  std::iota(devices.begin(), devices.end(), 0);
  return DeviceMesh(std::move(devices));
}

int64_t DeviceMesh::size(int64_t dim) const {
  BRAZE_USER_CHECK(dim >= 0 && dim < numDims())
      << toString() << " has " << numDims() << " dim" << (numDims() == 1 ? "" : "s")
      << "; there is no mesh dim " << dim;
  return shape_[static_cast<size_t>(dim)];
}

bool DeviceMesh::has(int64_t device) const {
  return std::find(devices_.begin(), devices_.end(), device) != devices_.end();
}

std::vector<int64_t> DeviceMesh::coordinatesOf(int64_t device) const {
  auto found = std::find(devices_.begin(), devices_.end(), device);
  BRAZE_USER_CHECK(found != devices_.end())
      << "device " << device << " is not in " << toString()
      << "; run this rank on a device of the mesh, or give the tensor a mesh that has it";
  int64_t index = found - devices_.begin();
  std::vector<int64_t> coordinates(shape_.size());
  for (size_t d = shape_.size(); d-- > 0;) {
    coordinates[d] = index % shape_[d];
    index /= shape_[d];
  }
  return coordinates;
}

std::string DeviceMesh::toString() const {
  std::ostringstream os;
  os << "mesh";
  if (shape_.size() > 1) os << "[" << listed(shape_) << "]";
  os << "{" << listed(devices_) << "}";
  return os.str();
}

}  // namespace braze
