#include "flockbridge/bridge/serial_candidates.hpp"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string_view>
#include <system_error>

namespace flockbridge::bridge {
namespace {

namespace fs = std::filesystem;

bool starts_with_any(const std::string& name, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return name.starts_with(p); });
}

/// The entries of `folder` whose names pass `keep`, sorted.
template <typename Keep>
std::vector<fs::path> entries(const fs::path& folder, Keep keep) {
  std::vector<fs::path> found;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    if (keep(it->path().filename().string())) found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::vector<std::string> serial_candidates(const CandidateScan& scan) {
  std::vector<std::string> candidates;
  std::set<fs::path> nodes;  // each device once, whichever name led to it
  const auto add = [&](const fs::path& path) {
    std::error_code error;
    const fs::path node = fs::canonical(path, error);
    if (error || !nodes.insert(node).second) return;
    candidates.push_back(path.string());
  };
  for (const fs::path& name : scan.named) {
    if (fs::exists(name)) add(name);
  }
  for (const fs::path& name : entries(scan.dev / "serial" / "by-id", [](const std::string&) { return true; }))
    add(name);
  for (const fs::path& node : entries(scan.dev, [](const std::string& n) {
         return starts_with_any(n, {"ttyACM", "ttyUSB"});
       })) {
    add(node);
  }
  if (scan.uarts) {
    for (const fs::path& node : entries(scan.dev, [](const std::string& n) {
           return starts_with_any(n, {"ttyAMA", "ttyS"});
         })) {
      add(node);
    }
  }
  return candidates;
}

}  // namespace flockbridge::bridge
