// Hotplug: the kernel's own notices that a serial device appeared or went.
// devtmpfs makes a USB serial adapter's node in /dev as the kernel finds it,
// and udev then gives it its group and its /dev/serial/by-id name; inotify
// on those folders tells of each step, as gpsd's hotplug is told by udev.
// No polling: the watch sleeps until a folder's entries change (their
// making, removal, renaming or owner and mode), and a burst of changes
// (one adapter's node, group and names) is told once, when it has settled.
#pragma once

#include <uv.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::bridge {

class DeviceWatch {
 public:
  /// Whether a change to the entry `name` of `folder` concerns the watcher.
  using Concerns = std::function<bool(const std::filesystem::path& folder, std::string_view name)>;

  /// How long the entries must stay still before a change is told: udev
  /// names and permits a new adapter within tens of milliseconds.
  static constexpr std::chrono::milliseconds kSettle{150};

  /// `changed` is called once a burst of changes that concern the watcher has settled.
  DeviceWatch(uv_loop_t* loop, Concerns concerns, std::function<void()> changed);
  DeviceWatch(const DeviceWatch&) = delete;
  DeviceWatch& operator=(const DeviceWatch&) = delete;
  ~DeviceWatch() { stop(); }

  /// Watches `folders` (and no others from now on); an error when the
  /// kernel refuses to watch one that exists.
  [[nodiscard]] protocol::Result<protocol::Done> watch(const std::vector<std::filesystem::path>& folders);
  void stop() noexcept;

 private:
  void on_readable();
  void on_settled();

  uv_loop_t* loop_;
  Concerns concerns_;
  std::function<void()> changed_;
  int fd_ = -1;
  std::vector<std::pair<int, std::filesystem::path>> watches_;  ///< inotify's watch descriptor, its folder
  UvHandle<uv_poll_t> poll_;
  UvHandle<uv_timer_t> settle_;
};

}  // namespace flockbridge::bridge
