#include "flockbridge/bridge/pty_uno.hpp"

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "flockbridge/bridge/terminal_mode.hpp"

namespace flockbridge::bridge {
namespace {

constexpr std::chrono::milliseconds kOpenCheckInterval{10};

std::string errno_text(int error) {
  return std::strerror(error);
}

}  // namespace

PtyUno::PtyUno(uv_loop_t* loop, PtyUnoSettings settings, Log log)
    : loop_(loop),
      log_(std::move(log)),
      report_frames_(settings.report_frames),
      to_host_(settings.to_host, settings.model.seed * 2654435761U + 1),
      to_uno_(settings.to_uno, settings.model.seed * 2654435761U + 2),
      model_(
          settings.model, [this](protocol::ByteView frame) { transmit(frame); },
          [this](std::string_view line) { log_(line); }) {
  if (report_frames_ && to_uno_.settings().any()) {
    model_.set_frame_observer(
        [this](protocol::ByteView payload, std::uint64_t position) { check_received_frame(payload, position); });
  }
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
      const protocol::ByteView received(buffer.data(), static_cast<std::size_t>(n));
      if (to_uno_.settings().any()) {
        if (report_frames_) {
          sent_frames_.feed(received);
          while (const auto event = sent_frames_.next()) {
            if (event->kind != protocol::FrameDecoder::EventKind::Frame) continue;
            sent_by_position_[event->position].assign(event->payload.begin(), event->payload.end());
            if (sent_by_position_.size() > 256) sent_by_position_.erase(sent_by_position_.begin());
          }
        }
        damaged_.clear();
        to_uno_.apply(received, damaged_);
        model_.bytes_received(damaged_, steady_now());
      } else {
        model_.bytes_received(received, steady_now());
      }
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

void PtyUno::report_if_undetectable(protocol::ByteView sent) {
  // Would a receiver that sees only this frame take the damaged bytes for a
  // good frame? Then the checksum cannot catch this damage.
  protocol::FrameDecoder decoder(protocol::kMaxPayloadLimit);
  decoder.feed(damaged_);
  while (const auto event = decoder.next()) {
    if (event->kind != protocol::FrameDecoder::EventKind::Frame) continue;
    if (!std::equal(event->payload.begin(), event->payload.end(), sent.begin(), sent.end())) {
      log_("tx-undetectable " + protocol::to_hex(sent) + " -> " + protocol::to_hex(event->payload));
    }
  }
}

void PtyUno::check_received_frame(protocol::ByteView payload, std::uint64_t position) {
  const auto sent = sent_by_position_.find(position);
  if (sent != sent_by_position_.end() &&
      std::equal(payload.begin(), payload.end(), sent->second.begin(), sent->second.end())) {
    return;
  }
  log_("rx-damaged " + protocol::to_hex(payload) + " was " +
       (sent == sent_by_position_.end() ? std::string("nothing") : protocol::to_hex(sent->second)));
}

void PtyUno::transmit(protocol::ByteView frame) {
  if (master_ < 0 || !connected_) return;
  const protocol::ByteView payload = frame.subspan(protocol::kSyncLength + 1, frame.size() - protocol::kFrameOverhead);
  if (report_frames_ && payload.size() >= 3 && payload[0] == 'S' && payload[1] == 'E' && payload[2] == 'N') {
    log_("tx-sensor " + protocol::to_hex(payload));
  }
  protocol::ByteView on_line = frame;
  if (to_host_.settings().any()) {
    damaged_.clear();
    if (to_host_.apply(frame, damaged_) && report_frames_) report_if_undetectable(payload);
    on_line = damaged_;
  }
  // A real UART does not wait for a reader either: what does not fit in the
  // pseudo-terminal's buffer is lost.
  const ssize_t n = ::write(master_, on_line.data(), on_line.size());
  const bool overrun = n < static_cast<ssize_t>(on_line.size());
  if (overrun && !overrun_) log_("tx-overrun: the host is not reading; packets are lost");
  overrun_ = overrun;
}

}  // namespace flockbridge::bridge
