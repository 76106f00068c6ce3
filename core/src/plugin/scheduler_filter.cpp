#include "braze/plugin/scheduler_filter.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "braze/error.h"

namespace braze {
namespace {

std::string trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return "";
  size_t end = text.find_last_not_of(" \t");
  return std::string(text.substr(begin, end - begin + 1));
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

}  // namespace

bool versionMatchesPin(const std::string& version, const std::string& pin) {
  auto parsed = SemanticVersion::parse(version);
  auto wanted = SemanticVersion::parse(pin);
  if (!parsed || !wanted) return version == pin;
  int parts = 1 + static_cast<int>(std::count(pin.begin(), pin.end(), '.'));
  if (parsed->major != wanted->major) return false;
  if (parts >= 2 && parsed->minor != wanted->minor) return false;
  if (parts >= 3 && parsed->patch != wanted->patch) return false;
  return true;
}

std::optional<SemanticVersion> SemanticVersion::parse(std::string_view text) {
  SemanticVersion version;
  int* parts[] = {&version.major, &version.minor, &version.patch};
  size_t index = 0;
  const char* cursor = text.data();
  const char* end = text.data() + text.size();
  while (true) {
    if (index == 3) return std::nullopt;
    auto [next, error] = std::from_chars(cursor, end, *parts[index]);
    if (error != std::errc() || *parts[index] < 0) return std::nullopt;
    ++index;
    if (next == end) return version;
    if (*next != '.') return std::nullopt;
    cursor = next + 1;
  }
}

bool schedulerNameMatches(const std::string& name, const std::string& id) {
  if (name == id) return true;
  size_t separator = id.rfind("::");
  return separator != std::string::npos && id.substr(separator + 2) == name;
}

SchedulerFilter SchedulerFilter::parse(std::string_view text) {
  SchedulerFilter filter;
  std::stringstream stream{std::string(text)};
  std::string raw;
  while (std::getline(stream, raw, ',')) {
    std::string item = trim(raw);
    if (item.empty()) continue;
    if (item == "-*") {
      filter.deny_others_ = true;
      continue;
    }
    Item parsed;
    if (item[0] == '-' || item[0] == '+') {
      parsed.deny = item[0] == '-';
      item = item.substr(1);
    }
    size_t at = item.find('@');
    if (at != std::string::npos) {
      parsed.pin = item.substr(at + 1);
      item = item.substr(0, at);
      BRAZE_USER_CHECK(!parsed.deny && SemanticVersion::parse(parsed.pin))
          << "BRAZE_SCHEDULERS: item '" << trim(raw) << "' has a bad version pin; write "
          << "name@1, name@1.2 or name@1.2.3 (pins apply to allowed schedulers only).";
    }
    BRAZE_USER_CHECK(!item.empty() && item.find_first_of("@*+-") == std::string::npos)
        << "BRAZE_SCHEDULERS: cannot read item '" << trim(raw)
        << "'; expected name, name@version, -name or -* separated by commas, for example "
           "\"pointwise@1,-reduction\".";
    parsed.name = item;
    filter.items_.push_back(std::move(parsed));
  }
  return filter;
}

std::optional<std::string> SchedulerFilter::refusal(
    const std::string& id, const std::string& version,
    const std::vector<std::string>& installed) const {
  bool listed = false;
  for (const Item& item : items_) {
    if (!schedulerNameMatches(item.name, id)) continue;
    if (item.deny) return "denied by BRAZE_SCHEDULERS item '-" + item.name + "'";
    listed = true;
    if (!item.pin.empty() && !versionMatchesPin(version, item.pin)) {
      const std::string pin = "'" + item.name + "@" + item.pin + "' in BRAZE_SCHEDULERS";
      const bool any_matches = std::any_of(installed.begin(), installed.end(), [&](const auto& v) {
        return versionMatchesPin(v, item.pin);
      });
      if (installed.empty() || any_matches) {
        return "version " + version + " does not match the pin " + pin;
      }
      return "the pin " + pin + " matches no installed version of " + id +
             " (installed: " + joined(installed) + "); pin one of those, or install " + id + "@" +
             item.pin;
    }
  }
  if (!listed && deny_others_) return "not listed in BRAZE_SCHEDULERS, which ends with '-*'";
  return std::nullopt;
}

std::optional<size_t> SchedulerFilter::preference(const std::string& id) const {
  size_t position = 0;
  for (const Item& item : items_) {
    if (item.deny) continue;
    if (schedulerNameMatches(item.name, id)) return position;
    ++position;
  }
  return std::nullopt;
}

}  // namespace braze
