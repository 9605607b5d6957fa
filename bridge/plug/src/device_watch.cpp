#include "flockbridge/bridge/device_watch.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

namespace flockbridge::bridge {

namespace {

/// What makes a device appear or go, or become ours to open: an entry made
/// or removed (a node, udev's link), renamed into place (udev and our
/// simulators make links under a temporary name), or given its group and
/// mode. Not IN_MODIFY: every write to a watched device would wake the watch.
constexpr std::uint32_t kChanges = IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_ATTRIB | IN_ONLYDIR;

}  // namespace

DeviceWatch::DeviceWatch(uv_loop_t* loop, Concerns concerns, std::function<void()> changed)
    : loop_(loop), concerns_(std::move(concerns)), changed_(std::move(changed)) {}

protocol::Result<protocol::Done> DeviceWatch::watch(const std::vector<std::filesystem::path>& folders) {
  if (fd_ < 0) {
    fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ < 0) return protocol::Error{std::string("hotplug: cannot watch for devices: ") + std::strerror(errno)};
    if (poll_.init(this, [&](uv_poll_t* p) { return uv_poll_init(loop_, p, fd_); }) < 0 ||
        settle_.init(this, [&](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0) {
      stop();
      return protocol::Error{"hotplug: cannot watch for devices on the loop"};
    }
    uv_poll_start(poll_.get(), UV_READABLE, [](uv_poll_t* p, int status, int /*events*/) {
      if (auto* self = owner_of<DeviceWatch>(p); self != nullptr && status >= 0) self->on_readable();
    });
  }
  // Folders no longer wanted are let go; those still wanted keep their watch.
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (std::find(folders.begin(), folders.end(), it->second) == folders.end()) {
      ::inotify_rm_watch(fd_, it->first);
      it = watches_.erase(it);
    } else {
      ++it;
    }
  }
  for (const std::filesystem::path& folder : folders) {
    if (std::any_of(watches_.begin(), watches_.end(), [&](const auto& w) { return w.second == folder; })) continue;
    const int wd = ::inotify_add_watch(fd_, folder.c_str(), kChanges);
    if (wd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) continue;  // gone meanwhile: its parent's watch tells of its return
      return protocol::Error{"hotplug: cannot watch " + folder.string() + ": " + std::strerror(errno)};
    }
    watches_.emplace_back(wd, folder);
  }
  return protocol::Done{};
}

void DeviceWatch::stop() noexcept {
  poll_.reset();
  settle_.reset();
  watches_.clear();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void DeviceWatch::on_readable() {
  alignas(inotify_event) std::array<char, 4096> buffer{};
  bool concerned = false;
  for (;;) {
    const ssize_t n = ::read(fd_, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (std::size_t at = 0; at < static_cast<std::size_t>(n);) {
      inotify_event event{};
      std::memcpy(&event, buffer.data() + at, sizeof event);
      const std::string_view name(buffer.data() + at + sizeof event, ::strnlen(buffer.data() + at + sizeof event, event.len));
      at += sizeof event + event.len;
      if ((event.mask & IN_Q_OVERFLOW) != 0) {
        concerned = true;  // changes were lost: look again at everything
        continue;
      }
      const int wd = event.wd;
      const auto folder = std::find_if(watches_.begin(), watches_.end(), [wd](const auto& w) { return w.first == wd; });
      if (folder == watches_.end()) continue;
      if (concerns_(folder->second, name)) concerned = true;
    }
  }
  if (concerned) {
    uv_timer_start(
        settle_.get(),
        [](uv_timer_t* t) {
          if (auto* self = owner_of<DeviceWatch>(t)) self->on_settled();
        },
        static_cast<std::uint64_t>(kSettle.count()), 0);
  }
}

void DeviceWatch::on_settled() {
  changed_();
}

}  // namespace flockbridge::bridge
