#include "flockbridge/bridge/pty_uno.hpp"

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace flockbridge::bridge {
namespace {

constexpr std::chrono::milliseconds kOpenCheckInterval{10};

std::string errno_text(int error) {
  return std::strerror(error);
}

}  // namespace

PtyUno::PtyUno(uv_loop_t* loop, sim::UnoModelSettings settings, Log log)
    : loop_(loop),
      log_(std::move(log)),
      model_(
          settings, [this](protocol::ByteView frame) { transmit(frame); },
          [this](std::string_view line) { log_(line); }) {
  (void)watch_.init<PtyUno, &PtyUno::check_open>(loop_, this);
  (void)tick_.init<PtyUno, &PtyUno::on_tick>(loop_, this);
}

PtyUno::~PtyUno() {
  close();
}

const std::string& PtyUno::device_path() const noexcept {
  return link_path_.empty() ? slave_path_ : link_path_;
}

protocol::Result<protocol::Done> PtyUno::plug_in(const std::string& link_path) {
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

  // Raw mode, so that nothing the bridge writes is echoed or edited.
  termios settings{};
  if (tcgetattr(master_, &settings) == 0) {
    cfmakeraw(&settings);
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

void PtyUno::unplug() {
  if (master_ < 0) return;
  watch_.stop();
  tick_.stop();
  poll_.reset();  // stops polling before the descriptor closes
  model_.power_off();
  connected_ = false;
  ::close(master_);
  master_ = -1;
  if (!link_path_.empty()) {
    std::error_code ignored;
    std::filesystem::remove(link_path_, ignored);
  }
  log_("unplugged");
}

void PtyUno::reboot() {
  if (connected_) {
    model_.reboot(steady_now());
    schedule_tick();
  }
}

void PtyUno::close() {
  unplug();
  watch_.reset();
  tick_.reset();
}

void PtyUno::check_open() {
  if (master_ < 0) return;
  pollfd probe{master_, POLLIN, 0};
  if (::poll(&probe, 1, 0) >= 0 && (probe.revents & POLLHUP) != 0) {
    watch_.start_after(kOpenCheckInterval);
    return;
  }
  // The bridge opened the port: the Uno resets, as it does on DTR.
  connected_ = true;
  const int rc = poll_.init(this, [this](uv_poll_t* p) { return uv_poll_init(loop_, p, master_); });
  if (rc < 0) {
    log_("cannot watch the pseudo-terminal: " + uv_error_text(rc));
    return;
  }
  uv_poll_start(poll_.get(), UV_READABLE, [](uv_poll_t* handle, int, int) {
    if (auto* self = owner_of<PtyUno>(handle)) self->on_readable();
  });
  log_("port opened by the host");
  model_.power_on(steady_now());
  schedule_tick();
}

void PtyUno::on_readable() {
  std::array<protocol::Byte, 4096> buffer{};
  for (;;) {
    const ssize_t n = ::read(master_, buffer.data(), buffer.size());
    if (n > 0) {
      model_.bytes_received(protocol::ByteView(buffer.data(), static_cast<std::size_t>(n)), steady_now());
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    disconnect();  // EIO: the host closed the port
    return;
  }
  schedule_tick();
}

void PtyUno::disconnect() {
  poll_.reset();
  tick_.stop();
  connected_ = false;
  model_.power_off();
  log_("port closed by the host");
  watch_.start_after(kOpenCheckInterval);
}

void PtyUno::on_tick() {
  model_.tick(steady_now());
  schedule_tick();
}

void PtyUno::schedule_tick() {
  if (const auto deadline = model_.next_deadline()) {
    tick_.start_at(*deadline);
  } else {
    tick_.stop();
  }
}

void PtyUno::transmit(protocol::ByteView frame) {
  if (master_ < 0 || !connected_) return;
  // A real UART does not wait for a reader either: what does not fit in the
  // pseudo-terminal's buffer is lost.
  const ssize_t n = ::write(master_, frame.data(), frame.size());
  const bool overrun = n < static_cast<ssize_t>(frame.size());
  if (overrun && !overrun_) log_("tx-overrun: the host is not reading; packets are lost");
  overrun_ = overrun;
}

}  // namespace flockbridge::bridge
