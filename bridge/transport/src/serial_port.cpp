#include "flockbridge/bridge/serial_port.hpp"

#include <fcntl.h>
#include <libserialport.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/terminal_mode.hpp"

namespace flockbridge::bridge {
namespace {

using protocol::Error;

std::string errno_text(int error) {
  return std::strerror(error);
}

// Unix98 pseudo-terminal slaves have major numbers 136 to 143.
bool is_pty_slave(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISCHR(info.st_mode)) return false;
  const unsigned major_number = major(info.st_rdev);
  return major_number >= 136 && major_number <= 143;
}

std::optional<speed_t> termios_speed(int baud) {
  static constexpr std::array<std::pair<int, speed_t>, 12> kSpeeds{{
      {9600, B9600},
      {19200, B19200},
      {38400, B38400},
      {57600, B57600},
      {115200, B115200},
      {230400, B230400},
      {460800, B460800},
      {500000, B500000},
      {576000, B576000},
      {921600, B921600},
      {1000000, B1000000},
      {2000000, B2000000},
  }};
  for (const auto& [rate, speed] : kSpeeds) {
    if (rate == baud) return speed;
  }
  return std::nullopt;
}

protocol::Result<int> open_terminal(const std::string& path, int baud) {
  const auto speed = termios_speed(baud);
  if (!speed) return Error{"unsupported baud rate " + std::to_string(baud)};
  const int fd = ::open(path.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Error{"cannot open " + path + ": " + errno_text(errno)};
  termios settings{};
  if (::tcgetattr(fd, &settings) != 0) {
    const int error = errno;
    ::close(fd);
    return Error{"cannot read the settings of " + path + ": " + errno_text(error)};
  }
  // The state libserialport leaves a real device in, VMIN = 0 included.
  apply_serial_mode(settings);
  ::cfsetispeed(&settings, *speed);
  ::cfsetospeed(&settings, *speed);
  if (::tcsetattr(fd, TCSANOW, &settings) != 0) {
    const int error = errno;
    ::close(fd);
    return Error{"cannot configure " + path + ": " + errno_text(error)};
  }
  ::tcflush(fd, TCIFLUSH);
  return fd;
}

/// What a failure to open `path` means, and what to do about it.
OpenFailure explain_open_failure(const std::string& path, const std::string& error) {
  if (::access(path.c_str(), F_OK) != 0) {
    return {"no robot at " + path + " (no such device)", "check that the robot is switched on and its cable plugged in",
            "give its device with --device, or try --simulate", true};
  }
  if (::access(path.c_str(), R_OK | W_OK) != 0) {
    return {"the bridge may not open " + path + " (permission denied)",
            "run it as a member of the group that owns the device (dialout; the package's service is)",
            "or give another --device"};
  }
  if (error.find("is in use") != std::string::npos) {
    return {error, "stop the other program (sudo systemctl stop flockbridge, for a bridge the package started)",
            "or give another --device"};
  }
  return {error, "check the robot's cable", "give another --device, or try --simulate"};
}

std::string sp_error_text(const char* what, const std::string& path) {
  char* message = sp_last_error_message();
  std::string text = std::string(what) + " " + path + ": " + (message != nullptr ? message : "unknown error");
  sp_free_error_message(message);
  return text;
}

}  // namespace

protocol::Result<SerialDevice> SerialDevice::open(const std::string& path, int baud) {
  SerialDevice device;
  if (is_pty_slave(path)) {
    auto fd = open_terminal(path, baud);
    if (!fd) return fd.error();
    device.fd_ = fd.value();
    if (auto held = device.lock(path); !held) return held.error();
    return device;
  }
  if (::access(path.c_str(), F_OK) != 0) return Error{"cannot open " + path + ": " + errno_text(errno)};
  if (sp_get_port_by_name(path.c_str(), &device.port_) != SP_OK) return Error{sp_error_text("cannot find", path)};
  if (sp_open(device.port_, SP_MODE_READ_WRITE) != SP_OK) {
    auto error = Error{sp_error_text("cannot open", path)};
    device.close();
    return error;
  }
  if (sp_set_baudrate(device.port_, baud) != SP_OK || sp_set_bits(device.port_, 8) != SP_OK ||
      sp_set_parity(device.port_, SP_PARITY_NONE) != SP_OK || sp_set_stopbits(device.port_, 1) != SP_OK ||
      sp_set_flowcontrol(device.port_, SP_FLOWCONTROL_NONE) != SP_OK ||
      sp_get_port_handle(device.port_, &device.fd_) != SP_OK) {
    auto error = Error{sp_error_text("cannot configure", path)};
    device.close();
    return error;
  }
  // The loop reads without blocking; libserialport leaves the mode to us.
  ::fcntl(device.fd_, F_SETFL, ::fcntl(device.fd_, F_GETFL) | O_NONBLOCK);
  ::ioctl(device.fd_, TIOCEXCL);
  if (auto held = device.lock(path); !held) return held.error();
  sp_flush(device.port_, SP_BUF_INPUT);
  return device;
}

protocol::Result<protocol::Done> SerialDevice::set_baud(int baud) {
  if (port_ != nullptr) {
    if (sp_set_baudrate(port_, baud) != SP_OK) return Error{sp_error_text("cannot set the speed of", "the device")};
    sp_flush(port_, SP_BUF_INPUT);
    return protocol::Done{};
  }
  const auto speed = termios_speed(baud);
  if (!speed) return Error{"unsupported baud rate " + std::to_string(baud)};
  termios settings{};
  if (::tcgetattr(fd_, &settings) != 0) return Error{"cannot read the line's settings: " + errno_text(errno)};
  ::cfsetispeed(&settings, *speed);
  ::cfsetospeed(&settings, *speed);
  if (::tcsetattr(fd_, TCSANOW, &settings) != 0) return Error{"cannot set the line's speed: " + errno_text(errno)};
  ::tcflush(fd_, TCIFLUSH);
  return protocol::Done{};
}

protocol::Result<protocol::Done> SerialDevice::lock(const std::string& path) {
  // TIOCEXCL keeps other users' programs out of a real device, but not
  // root's, and a second bridge started by hand beside the service (as root,
  // or on a pseudo-terminal) would talk to the robot at the same time. An
  // exclusive flock, which every bridge takes, keeps it out.
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return protocol::Done{};
  const int error = errno;
  close();
  if (error == EWOULDBLOCK) {
    return Error{path + " is in use: another flockbridge (or a program that locks it) has it open"};
  }
  return Error{"cannot lock " + path + ": " + errno_text(error)};
}

SerialDevice::SerialDevice(SerialDevice&& other) noexcept
    : port_(std::exchange(other.port_, nullptr)), fd_(std::exchange(other.fd_, -1)) {}

SerialDevice& SerialDevice::operator=(SerialDevice&& other) noexcept {
  if (this != &other) {
    close();
    port_ = std::exchange(other.port_, nullptr);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void SerialDevice::close() noexcept {
  if (port_ != nullptr) {
    if (fd_ >= 0) sp_close(port_);
    sp_free_port(port_);
    port_ = nullptr;
  } else if (fd_ >= 0) {
    ::close(fd_);
  }
  fd_ = -1;
}

namespace {

struct HandedOver {
  SerialDevice device;
  protocol::Bytes said;
};

std::map<std::string, HandedOver>& handed_over() {
  static std::map<std::string, HandedOver> devices;
  return devices;
}

}  // namespace

void hand_over_device(const std::string& path, SerialDevice device, protocol::Bytes said) {
  handed_over().insert_or_assign(path, HandedOver{std::move(device), std::move(said)});
}

void drop_handed_over_device(const std::string& path) noexcept {
  handed_over().erase(path);
}

SerialPort::SerialPort(uv_loop_t* loop, Settings settings, Listener& listener)
    : loop_(loop), settings_(std::move(settings)), listener_(listener) {
  (void)reopen_.init<SerialPort, &SerialPort::try_open>(loop_, this);
  (void)failure_timer_.init<SerialPort, &SerialPort::on_failure>(loop_, this);
}

void SerialPort::start() {
  running_ = true;
  backoff_ = std::chrono::milliseconds{0};
  try_open();
}

void SerialPort::try_open() {
  if (!running_ || device_.is_open()) return;
  // A device plug and play has open already is taken as it is: opened
  // again, an Arduino would reset and start over.
  const auto handed = handed_over().find(settings_.path);
  const bool taken_over = handed != handed_over().end();
  protocol::Bytes said;
  auto device = [&]() -> protocol::Result<SerialDevice> {
    if (!taken_over) return SerialDevice::open(settings_.path, settings_.baud);
    // At the speed the robot answered at, which is the driver's (serial.baud
    // of the robot found): setting it again would drop what waits unread.
    SerialDevice taken = std::move(handed->second.device);
    said = std::move(handed->second.said);
    handed_over().erase(handed);
    return taken;
  }();
  if (!device) {
    // Said once per kind of failure, not at every retry.
    if (device.error().message != last_failure_) {
      last_failure_ = device.error().message;
      listener_.transport_open_failed(explain_open_failure(settings_.path, last_failure_));
    }
    backoff_ = std::clamp(backoff_ * 2, settings_.reopen_min, settings_.reopen_max);
    reopen_.start_after(backoff_);
    watch_for_device();
    return;
  }
  folder_watch_.reset();
  device_ = std::move(device).value();
  poll_events_ = 0;
  const int rc = poll_.init(this, [this](uv_poll_t* p) { return uv_poll_init(loop_, p, device_.fd()); });
  if (rc < 0) {
    device_.close();
    log_error("cannot watch " + settings_.path + ": " + uv_error_text(rc));
    reopen_.start_after(settings_.reopen_max);
    return;
  }
  last_failure_.clear();
  failure_.clear();
  backoff_ = std::chrono::milliseconds{0};
  discard_output();
  update_poll();
  log_info((taken_over ? "took over " : "opened ") + settings_.path +
           (device_.is_pseudo_terminal() ? " (pseudo-terminal)" : "") + " at " + std::to_string(settings_.baud) +
           " baud" + (taken_over ? ", open since plug and play found the robot there" : ""));
  if (termios settings{}; ::tcgetattr(device_.fd(), &settings) == 0) {
    log_debug("terminal settings of " + settings_.path + ": " + describe_terminal(settings));
  }
  listener_.transport_opened();
  if (!said.empty() && device_.is_open()) listener_.transport_received(said);
}

void SerialPort::watch_for_device() {
  if (folder_watch_) return;
  const std::filesystem::path folder = std::filesystem::path(settings_.path).parent_path();
  int rc = folder_watch_.init(this, [this](uv_fs_event_t* e) { return uv_fs_event_init(loop_, e); });
  if (rc == 0) {
    rc = uv_fs_event_start(
        folder_watch_.get(),
        [](uv_fs_event_t* handle, const char* name, int, int status) {
          auto* self = owner_of<SerialPort>(handle);
          if (self != nullptr && status == 0) self->on_folder_changed(name);
        },
        folder.empty() ? "." : folder.c_str(), 0);
  }
  // Without a watch (the folder itself is missing) the retries still find the device.
  if (rc < 0) folder_watch_.reset();
}

void SerialPort::on_folder_changed(const char* name) {
  if (device_.is_open() || !running_) return;
  if (name != nullptr && std::filesystem::path(settings_.path).filename() != name) return;
  reopen_.stop();
  try_open();
}

void SerialPort::update_poll() {
  if (!poll_) return;
  const int events = UV_READABLE | UV_DISCONNECT | (pending_output_.empty() ? 0 : UV_WRITABLE);
  // Restarting a uv_poll takes the descriptor out of epoll and puts it back
  // (two system calls, and a spurious wakeup), so only for a change: a write
  // that went straight out, as nearly all do, changes nothing.
  if (events == poll_events_) return;
  poll_events_ = events;
  uv_poll_start(poll_.get(), events, [](uv_poll_t* handle, int status, int ready) {
    if (auto* self = owner_of<SerialPort>(handle)) self->on_poll(status, ready);
  });
}

void SerialPort::on_poll(int status, int events) {
  if (status < 0) {
    // libuv reports POLLERR, which a terminal raises when it hangs up (a USB
    // adapter unplugged, the pseudo-terminal's other end closed), as EBADF.
    lose_device(status == UV_EBADF ? settings_.path + " hung up or failed (the device reported an error)"
                                   : "error on " + settings_.path + ": " + uv_error_text(status));
    return;
  }
  if ((events & UV_WRITABLE) != 0) flush_output();
  if (device_.is_open() && (events & (UV_READABLE | UV_DISCONNECT)) != 0) read_available();
}

void SerialPort::read_available() {
  std::array<protocol::Byte, 4096> buffer{};
  // Bounded, so that a flood on the line cannot starve the clients.
  for (int round = 0; round < 16 && device_.is_open(); ++round) {
    const ssize_t n = ::read(device_.fd(), buffer.data(), buffer.size());
    if (n > 0) {
      listener_.transport_received(protocol::ByteView(buffer.data(), static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0) {
      // EIO: the pseudo-terminal's other end closed, or the adapter failed.
      lose_device(settings_.path + " failed: " + errno_text(errno));
      return;
    }
    // 0 bytes. With VMIN = 0 and VTIME = 0 (libserialport's setting) that is
    // "nothing waiting", the normal end of every drain: never a reason to
    // reopen, since an open may reset the robot's controller. Only a wake-up that brought
    // nothing at all is looked at twice: a hung-up terminal (a USB adapter
    // unplugged) also reads as 0 bytes, but refuses every terminal request.
    if (round == 0 && !device_alive()) {
      lose_device(settings_.path + " hung up");
      return;
    }
    return;
  }
}

bool SerialPort::device_alive() const {
  termios settings{};
  if (::tcgetattr(device_.fd(), &settings) != 0) return false;
  struct stat info {};
  return ::stat(settings_.path.c_str(), &info) == 0;
}

void SerialPort::write(protocol::ByteView bytes) {
  if (!device_.is_open()) return;
  if (!failure_.empty()) return;
  if (pending_output_.size() + bytes.size() > settings_.max_pending_output) {
    fail_soon(settings_.path + " does not take output (" + std::to_string(pending_output_.size()) + " bytes waiting)");
    return;
  }
  const bool was_idle = pending_output_.empty();
  pending_output_.insert(pending_output_.end(), bytes.begin(), bytes.end());
  pending_frames_.push_back(bytes.size());
  if (was_idle) flush_output();
}

void SerialPort::write_now(protocol::ByteView bytes) {
  if (!device_.is_open()) return;
  // The kernel may hold the first part of a frame whose rest waits here: the
  // robot would read the start of this frame as that frame's payload. So the
  // frame under way is finished first (waiting a little for the line), and
  // the frames queued behind it are dropped, this one being the last word.
  if (front_written_ > 0 && !pending_frames_.empty()) {
    const std::size_t rest = pending_frames_.front() - front_written_;
    if (!write_fully(protocol::ByteView(pending_output_.data(), rest))) {
      log_warning("could not finish the frame under way on " + settings_.path + "; the last frame may be lost");
    }
  }
  discard_output();
  if (!write_fully(bytes)) log_warning("could not write the last frame to " + settings_.path);
}

void SerialPort::discard_output() noexcept {
  pending_output_.clear();
  pending_frames_.clear();
  front_written_ = 0;
}

bool SerialPort::write_fully(protocol::ByteView bytes) {
  // At most this long for the line to take the bytes (a 34-byte frame takes 3 ms at 115200 baud).
  constexpr int kWaitMs = 200;
  while (!bytes.empty()) {
    const ssize_t n = ::write(device_.fd(), bytes.data(), bytes.size());
    if (n > 0) {
      bytes = bytes.subspan(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd writable{device_.fd(), POLLOUT, 0};
      if (::poll(&writable, 1, kWaitMs) > 0) continue;
    }
    return false;
  }
  return true;
}

void SerialPort::flush_output() {
  while (!pending_output_.empty() && device_.is_open()) {
    const ssize_t n = ::write(device_.fd(), pending_output_.data(), pending_output_.size());
    if (n > 0) {
      pending_output_.erase(pending_output_.begin(), pending_output_.begin() + n);
      front_written_ += static_cast<std::size_t>(n);
      while (!pending_frames_.empty() && front_written_ >= pending_frames_.front()) {
        front_written_ -= pending_frames_.front();
        pending_frames_.pop_front();
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    fail_soon(settings_.path + " failed: " + errno_text(errno));
    return;
  }
  update_poll();
}

void SerialPort::fail_soon(std::string reason) {
  // Writes come from inside the link controller's calls, which must not be
  // re-entered: the loss is reported from a callback of its own.
  failure_ = std::move(reason);
  failure_timer_.start_after(std::chrono::milliseconds{0});
}

void SerialPort::on_failure() {
  const std::string reason = std::exchange(failure_, {});
  if (!reason.empty() && device_.is_open()) lose_device(reason);
}

void SerialPort::lose_device(const std::string& reason) {
  failure_timer_.stop();
  poll_.reset();  // stop watching before the descriptor closes
  device_.close();
  discard_output();
  log_warning(reason + "; reopening");
  listener_.transport_closed(reason);
  if (running_) {
    // Try again at once: a device that came back before its loss was noticed
    // (a quick replug, a reset adapter) gives its folder no event to watch for.
    backoff_ = std::chrono::milliseconds{0};
    reopen_.start_after(backoff_);
    watch_for_device();
  }
}

void SerialPort::close() {
  running_ = false;
  reopen_.reset();
  folder_watch_.reset();
  failure_timer_.reset();
  poll_.reset();
  device_.close();
  discard_output();
}

}  // namespace flockbridge::bridge
