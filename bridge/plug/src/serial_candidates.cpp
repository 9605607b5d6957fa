#include "flockbridge/bridge/serial_candidates.hpp"

#include <fnmatch.h>
#include <glob.h>

#include <algorithm>
#include <set>
#include <system_error>
#include <utility>

namespace flockbridge::bridge {
namespace {

namespace fs = std::filesystem;

/// What `pattern` matches now, sorted.
std::vector<std::string> matches(const std::string& pattern) {
  glob_t found{};
  std::vector<std::string> paths;
  if (::glob(pattern.c_str(), 0, nullptr, &found) == 0) {
    for (std::size_t i = 0; i < found.gl_pathc; ++i) paths.emplace_back(found.gl_pathv[i]);
  }
  ::globfree(&found);
  std::sort(paths.begin(), paths.end());
  return paths;
}

/// `folder`, or its nearest ancestor that exists.
fs::path existing(fs::path folder) {
  std::error_code error;
  while (!folder.empty() && !fs::is_directory(folder, error) && folder != folder.root_path()) {
    folder = folder.parent_path();
  }
  return folder;
}

}  // namespace

std::vector<std::string> search_patterns(std::string_view text) {
  std::vector<std::string> patterns;
  std::string word;
  for (const char c : text) {
    if (c == ' ' || c == ',' || c == '\t' || c == '\n') {
      if (!word.empty()) patterns.push_back(std::exchange(word, {}));
    } else {
      word.push_back(c);
    }
  }
  if (!word.empty()) patterns.push_back(word);
  return patterns;
}

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
    std::error_code error;
    if (fs::is_symlink(name, error) && fs::exists(name, error)) add(name);
  }
  for (const std::string& pattern : scan.patterns) {
    for (const std::string& path : matches(pattern)) add(path);
  }
  return candidates;
}

std::vector<fs::path> candidate_folders(const CandidateScan& scan) {
  std::vector<fs::path> folders;
  const auto add = [&](const fs::path& folder) {
    const fs::path there = existing(folder);
    if (!there.empty() && std::find(folders.begin(), folders.end(), there) == folders.end()) folders.push_back(there);
  };
  for (const fs::path& name : scan.named) add(name.parent_path());
  for (const std::string& pattern : scan.patterns) add(fs::path(pattern).parent_path());
  return folders;
}

bool concerns_scan(const CandidateScan& scan, const fs::path& folder, std::string_view name) {
  const std::string entry(name);
  const fs::path path = folder / entry;
  for (const fs::path& named : scan.named) {
    if (named == path) return true;
  }
  for (const std::string& pattern : scan.patterns) {
    const fs::path wanted = fs::path(pattern);
    if (wanted.parent_path() == folder && ::fnmatch(wanted.filename().c_str(), entry.c_str(), 0) == 0) return true;
    // The pattern's folder, or one on the way to it (/dev/serial, made with the first by-id name).
    const std::string on_the_way = wanted.parent_path().string();
    const std::string here = path.string();
    if (on_the_way == here ||
        (on_the_way.size() > here.size() && on_the_way.starts_with(here) && on_the_way[here.size()] == '/')) {
      return true;
    }
  }
  return false;
}

}  // namespace flockbridge::bridge
