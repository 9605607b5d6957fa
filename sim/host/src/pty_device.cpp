#include "flockbridge/sim/host/pty_device.hpp"

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "flockbridge/bridge/terminal_mode.hpp"

namespace flockbridge::sim {
namespace {

using bridge::apply_serial_mode;

constexpr std::chrono::milliseconds kOpenCheckInterval{10};

std::string errno_text(int error) {
  return std::strerror(error);
}

}  // namespace

PtyDevice::PtyDevice(uv_loop_t* loop, Listener& listener, Log log)
    : loop_(loop), listener_(listener), log_(std::move(log)) {
  (void)watch_.init<PtyDevice, &PtyDevice::check_open>(loop_, this);
}

PtyDevice::~PtyDevice() {
  close();
}

protocol::Result<protocol::Done> PtyDevice::plug_in(const std::string& link_path) {
  unplug();
  link_path_ = link_path;
  master_ = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (master_ < 0) return protocol::Error{"cannot create a pseudo-terminal: " + errno_text(errno)};
  std::array<char, 128> name{};
  if (grantpt(master_) != 0 || unlockpt(master_) != 0 || ptsname_r(master_, name.data(), name.size()) != 0) {
    const int error = errno;
    unplug();
    return protocol::Error{"cannot set up the pseudo-terminal: " + errno_text(error)};
  }
  slave_path_ = name.data();

  // The slave end in the state libserialport leaves a real device in (the
  // master's terminal requests act on the slave): raw, nothing echoed or
  // edited, and VMIN = 0, VTIME = 0, so that a read with nothing waiting
  // returns 0 bytes, as on the robot.
  termios settings{};
  if (tcgetattr(master_, &settings) == 0) {
    apply_serial_mode(settings);
    tcsetattr(master_, TCSANOW, &settings);
  }
  // Open and close the slave once, so that the master reports POLLHUP until
  // the bridge opens it (see the header).
  const int slave = ::open(slave_path_.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave >= 0) ::close(slave);

  if (!link_path_.empty()) {
    const std::string temporary = link_path_ + ".new";
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    std::error_code error;
    std::filesystem::create_symlink(slave_path_, temporary, error);
    if (!error) std::filesystem::rename(temporary, link_path_, error);
    if (error) {
      unplug();
      return protocol::Error{"cannot make " + link_path + " a link to the pseudo-terminal: " + error.message()};
    }
  }
  log_("plugged in: " + device_path() + " -> " + slave_path_);
  watch_.start_after(std::chrono::milliseconds{0});
  return protocol::Done{};
}

void PtyDevice::unplug() {
  if (master_ < 0) return;
  watch_.stop();
  poll_.reset();  // stops polling before the descriptor closes
  const bool was_connected = connected_;
  connected_ = false;
  ::close(master_);
  master_ = -1;
  if (!link_path_.empty()) {
    std::error_code ignored;
    std::filesystem::remove(link_path_, ignored);
  }
  log_("unplugged");
  if (was_connected) listener_.device_closed();
}

void PtyDevice::close() {
  unplug();
  watch_.reset();
}

void PtyDevice::check_open() {
  if (master_ < 0) return;
  pollfd probe{master_, POLLIN, 0};
  if (::poll(&probe, 1, 0) >= 0 && (probe.revents & POLLHUP) != 0) {
    watch_.start_after(kOpenCheckInterval);
    return;
  }
  connected_ = true;
  const int rc = poll_.init(this, [this](uv_poll_t* p) { return uv_poll_init(loop_, p, master_); });
  if (rc < 0) {
    log_("cannot watch the pseudo-terminal: " + uv_error_text(rc));
    return;
  }
  uv_poll_start(poll_.get(), UV_READABLE, [](uv_poll_t* handle, int, int) {
    if (auto* self = owner_of<PtyDevice>(handle)) self->on_readable();
  });
  log_("port opened by the host");
  listener_.device_opened();
}

void PtyDevice::on_readable() {
  std::array<protocol::Byte, 4096> buffer{};
  for (;;) {
    const ssize_t n = ::read(master_, buffer.data(), buffer.size());
    if (n > 0) {
      listener_.device_received(protocol::ByteView(buffer.data(), static_cast<std::size_t>(n)));
      if (master_ < 0) return;  // the listener unplugged the device
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    disconnect();  // EIO: the host closed the port
    return;
  }
}

void PtyDevice::disconnect() {
  poll_.reset();
  connected_ = false;
  log_("port closed by the host");
  watch_.start_after(kOpenCheckInterval);
  listener_.device_closed();
}

void PtyDevice::write(protocol::ByteView bytes) {
  if (master_ < 0 || !connected_) return;
  const ssize_t n = ::write(master_, bytes.data(), bytes.size());
  const bool overrun = n < static_cast<ssize_t>(bytes.size());
  if (overrun && !overrun_) log_("tx-overrun: the host is not reading; packets are lost");
  overrun_ = overrun;
}

}  // namespace flockbridge::sim
