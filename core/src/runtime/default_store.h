#pragma once

// The process-wide default of a persistent store (kernel_store.h, decision_store.h): set
// explicitly, or made on first use by a factory that libbraze_serde registers.

#include <functional>
#include <memory>
#include <mutex>

namespace braze::runtime_detail {

template <typename Store>
class DefaultStoreSlot {
 public:
  std::shared_ptr<Store> get() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!decided_ && factory_) {
      store_ = factory_();
      decided_ = true;
    }
    return store_;
  }
  void set(std::shared_ptr<Store> store) {
    std::lock_guard<std::mutex> lock(mutex_);
    store_ = std::move(store);
    decided_ = true;
  }
  void setFactory(std::function<std::shared_ptr<Store>()> factory) {
    std::lock_guard<std::mutex> lock(mutex_);
    factory_ = std::move(factory);
  }

 private:
  std::mutex mutex_;
  bool decided_ = false;  // made by the factory, or set explicitly
  std::shared_ptr<Store> store_;
  std::function<std::shared_ptr<Store>()> factory_;
};

}  // namespace braze::runtime_detail
