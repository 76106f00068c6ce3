#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace braze {

/// A semantic version "x.y.z" (missing parts are 0), ordered numerically.
struct SemanticVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  auto operator<=>(const SemanticVersion&) const = default;
  /// nullopt when `text` is not one to three dot-separated non-negative integers.
  static std::optional<SemanticVersion> parse(std::string_view text);
};

/// The BRAZE_SCHEDULERS list: comma-separated items, each
///   `name`       prefer this scheduler: listed names are tried first, in list order;
///   `name@1`     the same, pinned to versions starting 1 (also `@1.2`, `@1.2.3`);
///   `-name`      never use this scheduler;
///   `-*`         never use any scheduler not listed positively (an allow list).
/// A name is a full id ("braze::pointwise") or the part after "::" ("pointwise").
/// Example: "pointwise@1,-reduction".
class SchedulerFilter {
 public:
  SchedulerFilter() = default;
  /// Throws braze::Error naming the bad item and the accepted forms.
  static SchedulerFilter parse(std::string_view text);

  /// Whether scheduler `id` at `version` may be used, and if not, why. `installed` lists every
  /// version of `id` that was found (highest first): when a pin matches none of them, the
  /// reason says so and names them, since no other version of `id` can take this one's place.
  std::optional<std::string> refusal(const std::string& id, const std::string& version,
                                     const std::vector<std::string>& installed = {}) const;
  /// Position of `id` among the preferred names, or nullopt when not listed.
  std::optional<size_t> preference(const std::string& id) const;
  bool empty() const { return items_.empty(); }

 private:
  struct Item {
    std::string name;
    std::string pin;  ///< version prefix; empty when not pinned
    bool deny = false;
  };
  std::vector<Item> items_;
  bool deny_others_ = false;
};

/// True when `version` matches `pin`: "1" matches 1.x.y, "1.2" matches 1.2.y, "1.2.3" only
/// itself.
bool versionMatchesPin(const std::string& version, const std::string& pin);

/// True when `name` is `id` or the part of `id` after "::".
bool schedulerNameMatches(const std::string& name, const std::string& id);

}  // namespace braze
