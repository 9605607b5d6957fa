#include "flockbridge/bridge/serial_prober.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace flockbridge::bridge {

using protocol::Done;
using protocol::Error;
using protocol::Result;

SerialProber::SerialProber(uv_loop_t* loop, std::vector<std::unique_ptr<protocol::SerialProbe>> probes,
                           std::function<void(const Outcome&)> done)
    : loop_(loop), probes_(std::move(probes)), done_(std::move(done)) {
  // The probes that only listen go first: an Arduino resets when its port
  // opens, and what is sent to it while its bootloader listens may keep it there.
  std::stable_partition(probes_.begin(), probes_.end(), [](const auto& probe) { return probe->listens_only(); });
}

Result<Done> SerialProber::start(const std::string& device) {
  cancel();
  if (probes_.empty()) return Error{"no robot family can be recognised on a serial line"};
  const auto& first = probes_.front()->speeds();
  if (first.empty()) return Error{std::string(probes_.front()->family()) + "'s probe has no speed to try"};
  auto opened = SerialDevice::open(device, first.front().baud);
  if (!opened) return opened.error();
  device_ = std::move(opened).value();
  path_ = device;
  probe_ = 0;
  speed_ = 0;
  notes_.clear();
  opened_ = std::chrono::steady_clock::now();
  if (poll_.init(this, [&](uv_poll_t* p) { return uv_poll_init(loop_, p, device_.fd()); }) < 0 ||
      timer_.init(this, [&](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0) {
    cancel();
    return Error{"cannot watch " + device + " on the loop"};
  }
  uv_poll_start(poll_.get(), UV_READABLE, [](uv_poll_t* p, int status, int /*events*/) {
    if (auto* self = owner_of<SerialProber>(p); self != nullptr && status >= 0) self->on_readable();
  });
  begin_speed();
  return Done{};
}

void SerialProber::cancel() noexcept {
  poll_.reset();
  timer_.reset();
  device_.close();
}

void SerialProber::begin_speed() {
  protocol::SerialProbe& probe = *probes_[probe_];
  const protocol::ProbeSpeed speed = probe.speeds()[speed_];
  heard_.clear();
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
  protocol::SerialProbe& probe = *probes_[probe_];
  const std::string at = std::to_string(probe.speeds()[speed_].baud);
  if (!note.empty()) notes_.push_back(std::string(probe.family()) + " at " + at + ": " + std::string(note));
  if (++speed_ >= probe.speeds().size()) {
    speed_ = 0;
    if (++probe_ >= probes_.size()) {
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
    const protocol::ProbeStep step =
        probes_[probe_]->feed(protocol::ByteView(buffer.data(), static_cast<std::size_t>(n)));
    if (step.found) {
      finish(&*step.found);
      return;
    }
    if (step.refuted) {
      next_speed("answered as no " + std::string(probes_[probe_]->family()) + " does");
      return;
    }
    send(step.send);
  }
}

void SerialProber::on_wait_over() {
  const auto wait = probes_[probe_]->speeds()[speed_].wait;
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
  outcome.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - opened_);
  if (finding != nullptr) {
    const protocol::SerialProbe& probe = *probes_[probe_];
    outcome.family = probe.family();
    outcome.finding = *finding;
    outcome.baud = probe.speeds()[speed_].baud;
  } else {
    for (const std::string& note : notes_) outcome.why_not += (outcome.why_not.empty() ? "" : "; ") + note;
  }
  cancel();
  done_(outcome);
}

}  // namespace flockbridge::bridge
