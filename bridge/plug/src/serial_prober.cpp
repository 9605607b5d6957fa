#include "flockbridge/bridge/serial_prober.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

namespace flockbridge::bridge {

using protocol::Done;
using protocol::Error;
using protocol::Result;

std::optional<protocol::UsbIdentity> usb_identity(const std::string& device, const std::filesystem::path& sys) {
  namespace fs = std::filesystem;
  std::error_code error;
  // A /dev/serial/by-id name leads to the tty's own node.
  const fs::path node = fs::canonical(device, error);
  const std::string tty = (error ? fs::path(device) : node).filename().string();
  if (tty.empty()) return std::nullopt;
  fs::path at = fs::canonical(sys / "class" / "tty" / tty / "device", error);
  if (error) return std::nullopt;
  const fs::path top = fs::canonical(sys, error);
  const auto read_hex = [](const fs::path& file) -> std::optional<std::uint16_t> {
    std::ifstream in(file);
    unsigned value = 0;
    if (!(in >> std::hex >> value) || value > 0xFFFF) return std::nullopt;
    return static_cast<std::uint16_t>(value);
  };
  // The USB device is the first parent that says its ids: the tty's device
  // is one of its interfaces (or, for some adapters, a port of one).
  for (; !at.empty() && at != top && at != at.root_path(); at = at.parent_path()) {
    const auto vendor = read_hex(at / "idVendor");
    const auto product = read_hex(at / "idProduct");
    if (vendor && product) return protocol::UsbIdentity{*vendor, *product};
  }
  return std::nullopt;
}

SerialProber::SerialProber(uv_loop_t* loop, std::vector<std::unique_ptr<protocol::SerialProbe>> probes,
                           std::function<void(const Outcome&)> done, Identify identify)
    : loop_(loop),
      probes_(std::move(probes)),
      done_(std::move(done)),
      identify_(identify ? std::move(identify) : [](const std::string& device) { return usb_identity(device); }) {
  // The probes that only listen go first: an Arduino resets when its port
  // opens, and what is sent to it while its bootloader listens may keep it there.
  std::stable_partition(probes_.begin(), probes_.end(), [](const auto& probe) { return probe->listens_only(); });
}

Result<Done> SerialProber::start(const std::string& device) {
  cancel();
  if (probes_.empty()) return Error{"no robot family can be recognised on a serial line"};
  notes_.clear();
  turns_.clear();
  heard_any_ = false;
  usb_ = identify_(device);
  for (const auto& probe : probes_) {
    if (probe->speeds().empty()) continue;
    if (probe->may_be_on(usb_)) {
      turns_.push_back(probe.get());
    } else {
      notes_.push_back(std::string(probe->family()) + ": not looked for on a USB adapter " +
                       protocol::usb_id_text(*usb_));
    }
  }
  auto opened = SerialDevice::open(device, turns_.empty() ? 9600 : turns_.front()->speeds().front().baud);
  if (!opened) return opened.error();
  device_ = std::move(opened).value();
  path_ = device;
  probe_ = 0;
  speed_ = 0;
  opened_ = std::chrono::steady_clock::now();
  if (poll_.init(this, [&](uv_poll_t* p) { return uv_poll_init(loop_, p, device_.fd()); }) < 0 ||
      timer_.init(this, [&](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0) {
    cancel();
    return Error{"cannot watch " + device + " on the loop"};
  }
  uv_poll_start(poll_.get(), UV_READABLE, [](uv_poll_t* p, int status, int /*events*/) {
    if (auto* self = owner_of<SerialProber>(p); self != nullptr && status >= 0) self->on_readable();
  });
  if (turns_.empty()) {
    // No family's robot can be on it: said on the loop's next turn, as any outcome is.
    uv_timer_start(
        timer_.get(),
        [](uv_timer_t* t) {
          if (auto* self = owner_of<SerialProber>(t)) self->finish(nullptr);
        },
        0, 0);
    return Done{};
  }
  begin_speed();
  return Done{};
}

void SerialProber::cancel() noexcept {
  poll_.reset();
  timer_.reset();
  device_.close();
}

void SerialProber::begin_speed() {
  protocol::SerialProbe& probe = *turns_[probe_];
  const protocol::ProbeSpeed speed = probe.speeds()[speed_];
  heard_.clear();
  said_.clear();
  if (auto set = device_.set_baud(speed.baud); !set) {
    next_speed(set.error().message);
    return;
  }
  send(probe.start(speed_));
  uv_timer_start(
      timer_.get(),
      [](uv_timer_t* t) {
        if (auto* self = owner_of<SerialProber>(t)) self->on_wait_over();
      },
      static_cast<std::uint64_t>(speed.wait.count()), 0);
}

void SerialProber::next_speed(std::string_view note) {
  uv_timer_stop(timer_.get());
  protocol::SerialProbe& probe = *turns_[probe_];
  const std::string at = std::to_string(probe.speeds()[speed_].baud);
  if (!note.empty()) notes_.push_back(std::string(probe.family()) + " at " + at + ": " + std::string(note));
  if (++speed_ >= probe.speeds().size()) {
    speed_ = 0;
    if (++probe_ >= turns_.size()) {
      finish(nullptr);
      return;
    }
  }
  begin_speed();
}

void SerialProber::on_readable() {
  std::array<protocol::Byte, 512> buffer{};
  for (;;) {
    const ssize_t n = ::read(device_.fd(), buffer.data(), buffer.size());
    // VMIN 0: a read of nothing means nothing yet, as EAGAIN does.
    if (n == 0 || (n < 0 && (errno == EAGAIN || errno == EINTR))) return;
    if (n < 0) {
      notes_.push_back("reading failed: " + std::string(std::strerror(errno)));
      finish(nullptr);
      return;
    }
    if (heard_.empty()) heard_ = "bytes came, but not its answer";
    heard_any_ = true;
    said_.insert(said_.end(), buffer.begin(), buffer.begin() + n);
    const protocol::ProbeStep step =
        turns_[probe_]->feed(protocol::ByteView(buffer.data(), static_cast<std::size_t>(n)));
    if (step.found) {
      finish(&*step.found);
      return;
    }
    if (step.refuted) {
      next_speed("answered as no " + std::string(turns_[probe_]->family()) + " does");
      return;
    }
    send(step.send);
  }
}

void SerialProber::on_wait_over() {
  const auto wait = turns_[probe_]->speeds()[speed_].wait;
  next_speed(heard_.empty() ? "no answer in " + std::to_string(wait.count()) + " ms" : heard_);
}

void SerialProber::send(const protocol::Bytes& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::write(device_.fd(), bytes.data() + sent, bytes.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a line that takes nothing: the wait runs out
    sent += static_cast<std::size_t>(n);
  }
}

void SerialProber::finish(const protocol::ProbeFinding* finding) {
  Outcome outcome;
  outcome.device = path_;
  outcome.usb = usb_;
  outcome.took = std::chrono::steady_clock::now() - opened_;
  if (finding != nullptr) {
    const protocol::SerialProbe& probe = *turns_[probe_];
    outcome.family = probe.family();
    outcome.finding = *finding;
    outcome.baud = probe.speeds()[speed_].baud;
    if (probe.listens_only()) {
      // Opened again, the robot would reset: the device stays open for whoever serves it.
      poll_.reset();
      timer_.reset();
      outcome.open_device = std::make_shared<SerialDevice>(std::move(device_));
      outcome.said = std::move(said_);
    }
  } else {
    for (const std::string& note : notes_) outcome.why_not += (outcome.why_not.empty() ? "" : "; ") + note;
    outcome.heard = heard_any_;
  }
  cancel();
  done_(outcome);
}

std::string SerialProber::Outcome::robot_text() const {
  return "a " + family + " robot" + (finding.model.empty() ? "" : " (" + finding.model + ")");
}

std::string SerialProber::Outcome::took_text() const {
  std::array<char, 32> text{};
  std::snprintf(text.data(), text.size(), "%.2f s", took.count() / 1000);
  return text.data();
}

std::optional<SerialProber::Outcome> probe_device(const std::string& device,
                                                  std::vector<std::unique_ptr<protocol::SerialProbe>> probes,
                                                  SerialProber::Identify identify) {
  uv_loop_t loop;
  if (uv_loop_init(&loop) != 0) return std::nullopt;
  std::optional<SerialProber::Outcome> outcome;
  {
    SerialProber prober(
        &loop, std::move(probes), [&](const SerialProber::Outcome& done) { outcome = done; }, std::move(identify));
    if (prober.start(device)) {
      while (!outcome && uv_run(&loop, UV_RUN_ONCE) != 0) {
      }
    }
  }
  uv_run(&loop, UV_RUN_DEFAULT);  // the prober's handles finish closing
  uv_loop_close(&loop);
  return outcome;
}

}  // namespace flockbridge::bridge
