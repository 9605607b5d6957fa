#include "flockbridge/protocol/pioneer/link.hpp"

#include <algorithm>

namespace flockbridge::protocol::pioneer {
namespace {

std::string millis(std::chrono::milliseconds duration) {
  return std::to_string(duration.count()) + " ms";
}

bool is_stop(const Command& command) {
  return command.number == command::kStop || command.number == command::kEStop;
}

}  // namespace

Link::Link(LinkSettings settings, LinkEvents& events) : settings_(settings), events_(events) {}

LinkStats Link::stats() const {
  LinkStats stats = stats_;
  stats.decoder = decoder_.stats();
  return stats;
}

void Link::set_state(LinkState state, std::string reason) {
  if (state == state_ && reason == reason_) return;
  state_ = state;
  reason_ = std::move(reason);
  events_.link_changed(state_, reason_);
}

void Link::send(const Bytes& packet, SteadyTime now) {
  ++stats_.packets_sent;
  last_sent_ = now;
  events_.transmit(packet);
}

void Link::port_opened(SteadyTime now) {
  decoder_.reset();
  attempts_ = 0;
  last_bytes_ = now;
  set_state(LinkState::Handshaking, "serial port opened; synchronising with the robot");
  start_sync(now);
}

void Link::port_closed(std::string_view reason) {
  phase_ = Phase::Closed;
  fail_queued("the robot link went down: " + std::string(reason));
  set_state(LinkState::Down, std::string(reason));
}

void Link::start_sync(SteadyTime now) {
  phase_ = Phase::Sync0;
  send_sync(command::kSync0, now);
}

void Link::send_sync(Byte which, SteadyTime now) {
  ++stats_.sync_attempts;
  send(encode_packet(which), now);
  phase_deadline_ = now + (attempts_ >= settings_.sync_retries ? settings_.sync_slow_interval : settings_.sync_timeout);
}

void Link::sync_timed_out(SteadyTime now) {
  ++attempts_;
  if (attempts_ == settings_.sync_retries) {
    set_state(LinkState::Down, "the robot does not answer SYNC (" + std::to_string(attempts_) +
                                   " tries); trying again every " + millis(settings_.sync_slow_interval));
  }
  start_sync(now);
}

void Link::bytes_received(ByteView bytes, SteadyTime now) {
  last_bytes_ = now;
  decoder_.feed(bytes);
  drain_decoder(now);
}

void Link::drain_decoder(SteadyTime now) {
  while (auto event = decoder_.next()) {
    if (event->kind == PacketDecoder::EventKind::Packet) on_packet(event->type, event->payload, now);
  }
}

void Link::on_packet(Byte type, ByteView payload, SteadyTime now) {
  if (phase_ == Phase::Closed) return;
  if (is_standard_sip(type)) {
    if (phase_ == Phase::Sync0 || phase_ == Phase::Sync1 || phase_ == Phase::Sync2) {
      // A robot left open: it takes SYNC0 for PULSE. CLOSE, then again.
      if (phase_ != Phase::Sync0 || attempts_closed_ != stats_.sync_attempts) {
        ++stats_.closes_sent;
        events_.note("SIPs while synchronising: the robot was left open; sending CLOSE");
        send(encode_packet(command::kClose), now);
        start_sync(now);
        attempts_closed_ = stats_.sync_attempts;
      }
      return;
    }
    auto sip = decode_standard_sip(type, payload);
    if (!sip) {
      ++stats_.bad_sips;
      events_.note("a SIP that passed its checksum but not its layout: " + sip.error().message);
      return;
    }
    ++stats_.sips;
    last_sip_ = now;
    if (phase_ == Phase::AwaitSip) {
      phase_ = Phase::Open;
      attempts_ = 0;
      ++stats_.connects;
      set_state(LinkState::Up, "");
    }
    events_.sip_received(sip.value(), type, payload);
    send_queued(now);
    return;
  }
  switch (phase_) {
    case Phase::Sync0:
    case Phase::Sync1:
      if (type == (phase_ == Phase::Sync0 ? command::kSync0 : command::kSync1)) {
        phase_ = phase_ == Phase::Sync0 ? Phase::Sync1 : Phase::Sync2;
        send_sync(phase_ == Phase::Sync1 ? command::kSync1 : command::kSync2, now);
      }
      return;
    case Phase::Sync2:
      if (type == command::kSync2) {
        if (auto identity = decode_identity(payload)) {
          identity_ = identity.value();
        } else {
          events_.note("the robot's SYNC2 answer does not name it: " + identity.error().message);
        }
        opened(now);
      }
      return;
    case Phase::AwaitConfig:
      if (type == kConfigPacket) {
        config_packet_ = encode_packet(type, payload);
        if (auto config = decode_config(payload)) {
          config_ = config.value();
        } else {
          config_.reset();
          events_.note("the configuration packet could not be read: " + config.error().message);
        }
        send(encode_command({command::kEnable, 1}), now);
        phase_ = Phase::AwaitSip;
        phase_deadline_ = now + settings_.sip_timeout;
        return;
      }
      break;
    case Phase::Closed:
    case Phase::AwaitSip:
    case Phase::Open:
      break;
  }
  events_.packet_received(type, payload);
}

void Link::opened(SteadyTime now) {
  send(encode_command({command::kOpen, NoArgument{}}), now);
  send(encode_command({command::kConfig, 1}), now);
  phase_ = Phase::AwaitConfig;
  phase_deadline_ = now + settings_.config_timeout;
  last_sip_ = now;
}

void Link::go_stale(SteadyTime now) {
  ++stats_.stale;
  fail_queued("the robot link went stale");
  set_state(LinkState::Stale, "no SIP from the robot for " + millis(settings_.sip_timeout) + "; synchronising again");
  attempts_ = 0;
  start_sync(now);
}

Result<Done> Link::submit(CommandToken token, const Command& command, SteadyTime now) {
  if (auto checked = check_command(command); !checked) return checked.error();
  const bool stop = is_stop(command);
  if (phase_ != Phase::Open && !(stop && robot_open())) {
    std::string text = "the robot link is " + std::string(link_state_name(state_));
    if (!reason_.empty()) text += " (" + reason_ + ")";
    return Error{text + "; command not sent", ErrorCode::LinkDown};
  }
  if (stop) {
    // A stop goes first; what waited behind it would only start the robot again.
    for (const Queued& queued : queue_) {
      const Error error{"cancelled by a stop", ErrorCode::Cancelled};
      ++stats_.commands_failed;
      events_.command_finished(queued.token, &error);
    }
    queue_.clear();
  } else if (queue_.size() >= settings_.max_queued_commands) {
    return Error{"the command queue is full (" + std::to_string(queue_.size()) +
                     " commands waiting for the robot); send fewer commands",
                 ErrorCode::QueueFull};
  }
  queue_.push_back(Queued{token, encode_command(command)});
  send_queued(now);
  return Done{};
}

void Link::send_queued(SteadyTime now) {
  if (queue_.empty() || !robot_open()) return;
  if (now - last_sent_ < settings_.command_spacing) return;
  Queued next = std::move(queue_.front());
  queue_.pop_front();
  ++stats_.commands_sent;
  send(next.packet, now);
  events_.command_finished(next.token, nullptr);
}

void Link::fail_queued(const std::string& why) {
  const Error error{why, ErrorCode::LinkLost};
  while (!queue_.empty()) {
    const CommandToken token = queue_.front().token;
    queue_.pop_front();
    ++stats_.commands_failed;
    events_.command_finished(token, &error);
  }
}

void Link::tick(SteadyTime now) {
  if (phase_ == Phase::Closed) return;
  if (decoder_.in_packet() && now - last_bytes_ >= settings_.packet_gap) {
    (void)decoder_.abandon();
    drain_decoder(now);
  }
  switch (phase_) {
    case Phase::Sync0:
    case Phase::Sync1:
    case Phase::Sync2:
      if (now >= phase_deadline_) sync_timed_out(now);
      break;
    case Phase::AwaitConfig:
      if (now >= phase_deadline_) {
        events_.note("no configuration packet within " + millis(settings_.config_timeout) + "; going on without");
        send(encode_command({command::kEnable, 1}), now);
        phase_ = Phase::AwaitSip;
        phase_deadline_ = now + settings_.sip_timeout;
      }
      break;
    case Phase::AwaitSip:
      if (now >= phase_deadline_) go_stale(now);
      break;
    case Phase::Open:
      if (now - last_sip_ >= settings_.sip_timeout) go_stale(now);
      break;
    case Phase::Closed:
      break;
  }
  if (robot_open()) {
    send_queued(now);
    if (now - last_sent_ >= settings_.pulse_interval) {
      ++stats_.pulses_sent;
      send(encode_packet(command::kPulse), now);
    }
  }
}

std::optional<SteadyTime> Link::next_deadline() const {
  if (phase_ == Phase::Closed) return std::nullopt;
  std::optional<SteadyTime> deadline;
  const auto consider = [&](SteadyTime t) { deadline = deadline ? std::min(*deadline, t) : t; };
  if (phase_ == Phase::Open) {
    consider(last_sip_ + settings_.sip_timeout);
  } else {
    consider(phase_deadline_);
  }
  if (robot_open()) {
    consider(last_sent_ + settings_.pulse_interval);
    if (!queue_.empty()) consider(last_sent_ + settings_.command_spacing);
  }
  if (decoder_.in_packet()) consider(last_bytes_ + settings_.packet_gap);
  return deadline;
}

Bytes Link::shutdown_packets() const {
  if (!robot_open()) return {};
  Bytes bytes = encode_command({command::kStop, NoArgument{}});
  const Bytes close = encode_packet(command::kClose);
  bytes.insert(bytes.end(), close.begin(), close.end());
  return bytes;
}

std::vector<std::pair<std::string, std::uint64_t>> link_counters(const LinkStats& l) {
  return {{"packets_received", l.decoder.packets},
          {"packets_sent", l.packets_sent},
          {"bad_checksum", l.decoder.bad_checksum},
          {"bad_count", l.decoder.bad_count},
          {"incomplete", l.decoder.incomplete},
          {"discarded_bytes", l.decoder.discarded_bytes},
          {"sync_attempts", l.sync_attempts},
          {"connects", l.connects},
          {"closes_sent", l.closes_sent},
          {"pulses_sent", l.pulses_sent},
          {"sips", l.sips},
          {"bad_sips", l.bad_sips},
          {"stale", l.stale}};
}

}  // namespace flockbridge::protocol::pioneer
