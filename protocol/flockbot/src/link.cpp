#include "flockbridge/protocol/flockbot/link.hpp"

#include <algorithm>

#include "flockbridge/protocol/flockbot/commands.hpp"

namespace flockbridge::protocol::flockbot {
namespace {

std::string millis(std::chrono::milliseconds duration) {
  return std::to_string(duration.count()) + " ms";
}

const Bytes& nak_frame() {
  static const Bytes frame = encode_frame(as_bytes("NAK"));
  return frame;
}

}  // namespace

Bytes encode_config_payload(const RobotConfig& config) {
  Bytes payload{'C', 'F', 'G', config.gripper};
  append_u16le(payload, config.left_wheel_stop);
  append_u16le(payload, config.right_wheel_stop);
  payload.insert(payload.end(), {config.servo_model, config.id, config.ip3, config.ip4});
  return payload;
}

Link::Link(LinkSettings settings, RobotConfig robot, LinkEvents& events)
    : settings_(settings),
      robot_(robot),
      cfg_frame_(encode_frame(encode_config_payload(robot))),
      events_(events),
      decoder_(settings.max_payload, &uno_packet_length) {}

void Link::set_robot_config(const RobotConfig& robot) {
  robot_ = robot;
  cfg_frame_ = encode_frame(encode_config_payload(robot));
}

void Link::reconfigure(SteadyTime now, std::string_view reason) {
  if (!port_open_ || phase_ == Phase::AwaitBootAck) return;
  restart_handshake(now, LinkState::Handshaking, std::string(reason), "the robot is being configured again");
}

void Link::set_settings(const LinkSettings& settings) {
  const std::size_t max_payload = settings_.max_payload;
  settings_ = settings;
  settings_.max_payload = max_payload;
}

LinkStats Link::stats() const {
  LinkStats stats = stats_;
  stats.decoder = decoder_.stats();
  return stats;
}

void Link::port_opened(SteadyTime now) {
  port_open_ = true;
  decoder_.reset();
  possible_strays_ = 0;
  quiet_until_ = now;
  nak_owed_ = false;
  reboot_suspected_until_.reset();
  last_received_ = now;
  last_sent_ = LastSent::Nothing;
  phase_ = Phase::AwaitBootAck;
  cfg_attempts_ = 0;
  handshake_deadline_ = now + settings_.boot_wait;
  set_state(LinkState::Handshaking, "serial port opened; waiting for the robot to start");
}

void Link::port_closed(std::string_view reason) {
  port_open_ = false;
  reboot_suspected_until_.reset();
  phase_ = Phase::Idle;
  fail_all("the robot link went down: " + std::string(reason));
  set_state(LinkState::Down, std::string(reason));
}

void Link::bytes_received(ByteView bytes, SteadyTime now) {
  last_bytes_ = now;
  decoder_.feed(bytes);
  drain_decoder(now);
}

std::uint64_t Link::noise_seen() const noexcept {
  const FrameDecoderStats& d = decoder_.stats();
  return d.discarded_bytes + d.bad_checksum + d.bad_length + d.incomplete;
}

void Link::drain_decoder(SteadyTime now) {
  while (auto event = decoder_.next()) on_decoder_event(*event, now);
}

void Link::on_decoder_event(const FrameDecoder::Event& event, SteadyTime now) {
  switch (event.kind) {
    case FrameDecoder::EventKind::Frame:
      on_frame(event.payload, now);
      break;
    case FrameDecoder::EventKind::BadChecksum:
    case FrameDecoder::EventKind::BadLength:
    case FrameDecoder::EventKind::Incomplete:
      on_bad_frame(event.payload, now);
      break;
  }
}

void Link::on_bad_frame(ByteView payload, SteadyTime now) {
  if (settings_.require_command_ack && payload.size() == kSensorPayloadLength) {
    ++stats_.damaged_sensors_not_naked;
    return;
  }
  if (in_flight_) {
    // The Uno's answer to this NAK would be the packet it sent last, which
    // may be a NAK of its own: taken for a NAK of the command on the line,
    // it would resend a command the Uno has. So the NAK waits until the
    // command is settled.
    ++stats_.naks_deferred;
    nak_owed_ = true;
    return;
  }
  send_nak(now);
}

void Link::send_nak(SteadyTime now) {
  ++stats_.naks_sent;
  nak_resends_ = 0;
  expect_possible_stray(now);
  send(nak_frame(), LastSent::Nak);
}

void Link::expect_possible_stray(SteadyTime now) {
  if (now >= quiet_until_) possible_strays_ = 0;  // the earlier ones had their time
  ++possible_strays_;
  quiet_until_ = now + settings_.nak_window;
}

void Link::on_frame(ByteView payload, SteadyTime now) {
  last_received_ = now;
  auto packet = parse_uno_packet(payload);
  if (!packet) {
    ++stats_.implausible;
    return;
  }
  if (last_command_ && packet.value().kind != UnoPacketKind::Nak) last_command_->uno_spoke = true;
  if (reboot_suspected_until_ && packet.value().kind != UnoPacketKind::Ack) {
    // A rebooted Uno would send nothing but ACK: that ACK was a stray.
    reboot_suspected_until_.reset();
    ++stats_.stray_acks;
    events_.note("an unexplained ACK was followed by other packets: a stray, not a reboot");
    start_next(now);
  }
  switch (packet.value().kind) {
    case UnoPacketKind::Ack:
      on_ack(now);
      return;
    case UnoPacketKind::Nak:
      on_nak(now);
      return;
    default:
      break;
  }
  // Anything else while waiting for the boot ACK means the Uno is already
  // running (it did not reset on open): configure it now.
  if (phase_ == Phase::AwaitBootAck) send_cfg(now);
  events_.packet_received(packet.value(), payload);
}

void Link::on_ack(SteadyTime now) {
  if (in_flight_) {
    // Every ACK while a command is on the line belongs to that command: the
    // quiet period before it let the earlier exchange's strays pass, and a
    // flush brought in the late answers before the command went out again.
    ++stats_.commands_acknowledged;
    if (in_flight_->flushed) ++stats_.late_acks;
    finish_in_flight(nullptr, true);
    start_next(now);
    return;
  }
  switch (phase_) {
    case Phase::AwaitBootAck:
      send_cfg(now);
      return;
    case Phase::AwaitCfgAck:
      phase_ = Phase::Idle;
      // CFG went out more than once: its other ACKs may still come.
      for (unsigned extra = 1; extra < cfg_attempts_; ++extra) expect_possible_stray(now);
      cfg_attempts_ = 0;
      set_state(LinkState::Up, "");
      start_next(now);
      return;
    case Phase::Idle:
      if (possible_strays_ > 0 && now < quiet_until_) {
        --possible_strays_;
        ++stats_.stray_acks;
        return;
      }
      if (state_ == LinkState::Up && !reboot_suspected_until_) {
        // Hold new commands until the Uno shows whether it rebooted.
        reboot_suspected_until_ = now + settings_.reboot_confirm;
      }
      return;
  }
}

void Link::on_nak(SteadyTime now) {
  ++stats_.naks_received;
  if (in_flight_ && in_flight_->flushed) {
    // Perhaps the answer to the frame the flush completed: an ACK for the
    // command may follow. The end of the window decides.
    in_flight_->nak_after_flush = true;
    return;
  }
  if (in_flight_) {
    retry_in_flight(now, ErrorCode::Refused, "the robot refused this command");
    return;
  }
  if (last_sent_ == LastSent::Command && last_command_ && state_ == LinkState::Up) {
    on_late_nak(now);
    return;
  }
  if (last_sent_ == LastSent::Cfg && phase_ == Phase::AwaitCfgAck) {
    ++stats_.retransmits;
    ++cfg_attempts_;
    send(cfg_frame_, LastSent::Cfg);
    return;
  }
  if (last_sent_ == LastSent::Nak && nak_resends_ < settings_.nak_retries) {
    ++nak_resends_;
    ++stats_.retransmits;
    expect_possible_stray(now);
    send(nak_frame(), LastSent::Nak);
    return;
  }
  ++stats_.unexpected_naks;
}

void Link::on_late_nak(SteadyTime now) {
  LastCommand& last = *last_command_;
  if (last.resends >= settings_.nak_retries) {
    ++stats_.unexpected_naks;
    events_.note("a late NAK for a command already sent " + std::to_string(last.resends + 1) +
                 " times: not sent again");
    return;
  }
  if (last.repeats && (last.confirmed || last.uno_spoke)) {
    ++stats_.late_naks_not_resent;
    events_.note(std::string("a late NAK after a command that repeats motion, ") +
                 (last.confirmed ? "which the robot acknowledged" : "with other packets from the robot since") +
                 ": not resent, so that the robot does not move twice");
    return;
  }
  ++last.resends;
  ++stats_.retransmits;
  ++stats_.late_resends;
  expect_possible_stray(now);
  in_flight_ = InFlight{kResentToken, last.frame, last.resends, now + settings_.nak_window, noise_seen()};
  send(in_flight_->frame, LastSent::Command);
}

void Link::retry_in_flight(SteadyTime now, ErrorCode code, std::string_view what) {
  if (in_flight_->resends >= settings_.nak_retries) {
    const Error error{std::string(what) + " (" + std::to_string(in_flight_->resends + 1) + " tries); it was dropped",
                      code};
    finish_in_flight(&error);
    start_next(now);
    return;
  }
  ++in_flight_->resends;
  ++stats_.retransmits;
  expect_possible_stray(now);
  in_flight_->deadline = now + settings_.nak_window;
  in_flight_->noise_mark = noise_seen();
  in_flight_->flushed = false;
  in_flight_->nak_after_flush = false;
  send(in_flight_->frame, LastSent::Command);
}

void Link::flush_receiver(SteadyTime now) {
  ++stats_.flushes;
  in_flight_->flushed = true;
  in_flight_->nak_after_flush = false;
  // Ten bits a byte (8N1), rounded up to whole microseconds.
  const auto on_the_line =
      std::chrono::microseconds((settings_.flush_bytes * 10 * 1'000'000 + settings_.baud - 1) / settings_.baud);
  in_flight_->deadline = now + std::chrono::ceil<std::chrono::milliseconds>(on_the_line) + settings_.nak_window;
  const Bytes zeros(settings_.flush_bytes, 0);
  events_.transmit(zeros);
}

void Link::in_flight_unanswered(SteadyTime now) {
  if (!settings_.require_command_ack) {
    // Firmware that does not acknowledge: a window without NAK is delivery.
    finish_in_flight(nullptr);
    start_next(now);
    return;
  }
  if (!in_flight_->flushed && settings_.flush_bytes > 0) {
    flush_receiver(now);
    return;
  }
  if (last_command_ && last_command_->repeats && (nak_owed_ || noise_seen() != in_flight_->noise_mark)) {
    // Noise on the line while this command waited: perhaps its ACK.
    ++stats_.resends_withheld;
    const Error error{
        "the robot's answer to this command was damaged on the line; it was not sent again, since it may "
        "have been carried out and a repeated move would move the robot twice",
        ErrorCode::NoAck};
    finish_in_flight(&error);
    // Its ACK may only be late: it must not confirm the next command.
    expect_possible_stray(now);
    start_next(now);
    return;
  }
  if (in_flight_->nak_after_flush) {
    retry_in_flight(now, ErrorCode::Refused, "the robot refused this command");
  } else {
    retry_in_flight(now, ErrorCode::NoAck, "the robot did not acknowledge this command");
  }
}

Result<Done> Link::submit(CommandToken token, ByteView payload, SteadyTime now) {
  const bool emergency = is_emergency(payload);
  if (state_ != LinkState::Up && !(emergency && port_open_)) {
    std::string text = "the robot link is " + std::string(link_state_name(state_));
    if (!reason_.empty()) text += " (" + reason_ + ")";
    return Error{text + "; command not sent", ErrorCode::LinkDown};
  }
  Bytes frame = encode_frame(payload);
  if (emergency) {
    // The emergency stop goes out now. What was waiting behind it would only
    // start the robot again, so it is cancelled; a command already on the
    // line has gone out and cannot be resent any more.
    for (const Queued& queued : queue_) {
      ++stats_.commands_cancelled;
      const Error error{"cancelled by an emergency stop", ErrorCode::Cancelled};
      events_.command_finished(queued.token, &error, false);
    }
    queue_.clear();
    if (in_flight_) finish_in_flight(nullptr);
    queue_.push_front(Queued{token, std::move(frame), true});
    start_next(now);
    return Done{};
  }
  if (queue_.size() >= settings_.max_queued_commands) {
    return Error{"the command queue is full (" + std::to_string(queue_.size()) +
                     " commands waiting for the robot); send fewer commands",
                 ErrorCode::QueueFull};
  }
  queue_.push_back(Queued{token, std::move(frame), false});
  start_next(now);
  return Done{};
}

void Link::start_next(SteadyTime now) {
  if (in_flight_) return;
  if (nak_owed_ && port_open_) {
    nak_owed_ = false;
    send_nak(now);  // its answer is a stray at worst: the quiet period below lets it pass
  }
  if (queue_.empty() || !port_open_) return;
  if (state_ != LinkState::Up && !queue_.front().emergency) return;
  // After a noisy exchange, wait until its stray ACKs have had their time;
  // an emergency stop never waits.
  if ((reboot_suspected_until_ || (now < quiet_until_ && possible_strays_ > 0)) && !queue_.front().emergency) return;
  possible_strays_ = 0;
  Queued next = std::move(queue_.front());
  queue_.pop_front();
  in_flight_ = InFlight{next.token, std::move(next.frame), 0, now + settings_.nak_window, noise_seen()};
  ++stats_.commands_sent;
  const ByteView payload =
      ByteView(in_flight_->frame).subspan(kSyncLength + 1, in_flight_->frame.size() - kFrameOverhead);
  last_command_ = LastCommand{in_flight_->frame, 0, false, repeats_motion(payload), false};
  send(in_flight_->frame, LastSent::Command);
}

void Link::finish_in_flight(const Error* error, bool acknowledged) {
  const CommandToken token = in_flight_->token;
  if (last_command_) {
    last_command_->resends = in_flight_->resends;
    last_command_->confirmed = last_command_->confirmed || acknowledged;
  }
  in_flight_.reset();
  if (token == kResentToken) return;  // a settled command sent again: counted and answered already
  ++(error ? stats_.commands_failed : stats_.commands_delivered);
  if (error == nullptr) ++(acknowledged ? stats_.commands_confirmed : stats_.commands_unconfirmed);
  events_.command_finished(token, error, acknowledged);
}

void Link::fail_all(const std::string& reason) {
  const Error error{reason, ErrorCode::LinkLost};
  if (in_flight_) finish_in_flight(&error);
  while (!queue_.empty()) {
    const CommandToken token = queue_.front().token;
    queue_.pop_front();
    ++stats_.commands_failed;
    events_.command_finished(token, &error, false);
  }
}

void Link::send(ByteView frame, LastSent kind) {
  last_sent_ = kind;
  ++stats_.frames_sent;
  events_.transmit(frame);
}

void Link::send_cfg(SteadyTime now) {
  phase_ = Phase::AwaitCfgAck;
  ++cfg_attempts_;
  ++stats_.cfg_sent;
  handshake_deadline_ = now + (cfg_attempts_ > settings_.handshake_retries ? settings_.handshake_slow_interval
                                                                           : settings_.handshake_timeout);
  send(cfg_frame_, LastSent::Cfg);
}

void Link::handshake_timed_out(SteadyTime now) {
  if (phase_ == Phase::AwaitCfgAck && cfg_attempts_ >= settings_.handshake_retries) {
    set_state(LinkState::Down, "the robot does not answer CFG (" + std::to_string(cfg_attempts_) +
                                   " tries); trying again every " + millis(settings_.handshake_slow_interval));
  }
  send_cfg(now);
}

void Link::confirm_reboot(SteadyTime now) {
  events_.note("an ACK and then nothing else: the robot rebooted");
  ++stats_.reboots;
  restart_handshake(now, LinkState::Handshaking, "the robot rebooted; configuring it again", "the robot rebooted");
}

void Link::go_stale(SteadyTime now) {
  ++stats_.stale;
  restart_handshake(now, LinkState::Stale,
                    "nothing from the robot for " + millis(settings_.stale_timeout) + "; configuring it again",
                    "the robot link went stale");
}

void Link::restart_handshake(SteadyTime now, LinkState state, std::string reason,
                                       const std::string& failure) {
  reboot_suspected_until_.reset();
  fail_all(failure);
  cfg_attempts_ = 0;
  set_state(state, std::move(reason));
  send_cfg(now);
}

void Link::tick(SteadyTime now) {
  if (port_open_ && decoder_.in_frame() && now - last_bytes_ >= settings_.frame_gap) {
    // The rest of this frame is not coming: its header was noise, or its
    // LEN was corrupted upwards. The good frames behind it are already in.
    if (const auto abandoned = decoder_.abandon()) on_decoder_event(*abandoned, now);
    drain_decoder(now);
  }
  if (reboot_suspected_until_ && now >= *reboot_suspected_until_) confirm_reboot(now);
  if (!in_flight_ && now >= quiet_until_) start_next(now);
  if (in_flight_ && now >= in_flight_->deadline) in_flight_unanswered(now);
  if (phase_ != Phase::Idle && now >= handshake_deadline_) handshake_timed_out(now);
  if (state_ == LinkState::Up && now - last_received_ >= settings_.stale_timeout) go_stale(now);
}

std::optional<SteadyTime> Link::next_deadline() const {
  std::optional<SteadyTime> deadline;
  const auto consider = [&](SteadyTime t) { deadline = deadline ? std::min(*deadline, t) : t; };
  if (in_flight_) consider(in_flight_->deadline);
  if (!in_flight_ && !queue_.empty() && possible_strays_ > 0) consider(quiet_until_);
  if (phase_ != Phase::Idle) consider(handshake_deadline_);
  if (state_ == LinkState::Up) consider(last_received_ + settings_.stale_timeout);
  if (reboot_suspected_until_) consider(*reboot_suspected_until_);
  if (port_open_ && decoder_.in_frame()) consider(last_bytes_ + settings_.frame_gap);
  return deadline;
}

void Link::set_state(LinkState state, std::string reason) {
  if (state == state_ && reason == reason_) return;
  state_ = state;
  reason_ = std::move(reason);
  events_.link_changed(state_, reason_);
}

std::vector<std::pair<std::string, std::uint64_t>> link_counters(const LinkStats& l) {
  return {{"frames_received", l.decoder.frames},
          {"frames_sent", l.frames_sent},
          {"bad_checksum", l.decoder.bad_checksum},
          {"bad_length", l.decoder.bad_length},
          {"incomplete", l.decoder.incomplete},
          {"discarded_bytes", l.decoder.discarded_bytes},
          {"implausible", l.implausible},
          {"naks_sent", l.naks_sent},
          {"naks_received", l.naks_received},
          {"unexpected_naks", l.unexpected_naks},
          {"retransmits", l.retransmits},
          {"late_resends", l.late_resends},
          {"late_naks_not_resent", l.late_naks_not_resent},
          {"resends_withheld", l.resends_withheld},
          {"stray_acks", l.stray_acks},
          {"flushes", l.flushes},
          {"late_acks", l.late_acks},
          {"cfg_sent", l.cfg_sent},
          {"reboots", l.reboots},
          {"stale", l.stale}};
}

}  // namespace flockbridge::protocol::flockbot
