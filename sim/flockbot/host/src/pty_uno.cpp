#include "flockbridge/sim/flockbot/pty_uno.hpp"

#include <algorithm>
#include <sstream>
#include <utility>

namespace flockbridge::sim::flockbot {

PtyUno::PtyUno(uv_loop_t* loop, PtyUnoSettings settings, const SimulatedLine& on_line, Log log)
    : loop_(loop),
      log_(std::move(log)),
      report_frames_(settings.report_frames),
      to_host_(on_line.to_host, on_line.seed * 2654435761U + 1),
      to_uno_(on_line.to_robot, on_line.seed * 2654435761U + 2),
      model_(
          std::move(settings.model), [this](protocol::ByteView frame) { transmit(frame); },
          [this](std::string_view line) { log_(line); }),
      device_(loop, *this, [this](std::string_view line) { log_(line); }) {
  if (report_frames_ && to_uno_.settings().any()) {
    model_.set_frame_observer(
        [this](protocol::ByteView payload, std::uint64_t position) { check_received_frame(payload, position); });
  }
  (void)tick_.init<PtyUno, &PtyUno::on_tick>(loop_, this);
}

PtyUno::~PtyUno() {
  close();
}

protocol::Result<protocol::Done> PtyUno::plug_in(const std::string& link_path) {
  return device_.plug_in(link_path);
}

void PtyUno::unplug() {
  device_.unplug();
}

void PtyUno::reboot() {
  if (device_.connected()) {
    model_.reboot(steady_now());
    schedule_tick();
  }
}

void PtyUno::close() {
  device_.close();
  tick_.reset();
}

void PtyUno::device_opened() {
  // The bridge opened the port: the Uno resets, as it does on DTR.
  model_.power_on(steady_now());
  schedule_tick();
}

void PtyUno::device_received(protocol::ByteView received) {
  if (to_uno_.settings().any()) {
    if (report_frames_) {
      sent_frames_.feed(received);
      while (const auto event = sent_frames_.next()) {
        if (event->kind != protocol::flockbot::FrameDecoder::EventKind::Frame) continue;
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
  schedule_tick();
}

void PtyUno::device_closed() {
  tick_.stop();
  model_.power_off();
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
  protocol::flockbot::FrameDecoder decoder(protocol::flockbot::kMaxPayloadLimit);
  decoder.feed(damaged_);
  while (const auto event = decoder.next()) {
    if (event->kind != protocol::flockbot::FrameDecoder::EventKind::Frame) continue;
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
  if (!device_.connected()) return;
  const protocol::ByteView payload =
      frame.subspan(protocol::flockbot::kSyncLength + 1, frame.size() - protocol::flockbot::kFrameOverhead);
  if (report_frames_ && payload.size() >= 3 && payload[0] == 'S' && payload[1] == 'E' && payload[2] == 'N') {
    log_("tx-sensor " + protocol::to_hex(payload));
  }
  protocol::ByteView on_line = frame;
  if (to_host_.settings().any()) {
    damaged_.clear();
    if (to_host_.apply(frame, damaged_) && report_frames_) report_if_undetectable(payload);
    on_line = damaged_;
  }
  device_.write(on_line);
}

bool PtyUno::run_command(const std::string& command, std::istringstream& words, const Log& /*say*/) {
  if (command == "nak-next") {
    unsigned count = 1;
    words >> count;
    model_.nak_next(count);
  } else if (command == "corrupt-next") {
    model_.corrupt_next();
  } else if (command == "emergency") {
    model_.send_emergency();
  } else if (command == "packet") {
    std::string text;
    words >> text;
    model_.send_packet(protocol::as_bytes(text));
  } else if (command == "burst") {
    unsigned count = 5;
    words >> count;
    model_.send_sensor_burst(count);
  } else if (command == "bump") {
    unsigned low = 0;
    unsigned high = 0;
    words >> low >> high;
    model_.set_bumpers(static_cast<std::uint8_t>(low), static_cast<std::uint8_t>(high));
  } else {
    return false;
  }
  return true;
}

}  // namespace flockbridge::sim::flockbot
