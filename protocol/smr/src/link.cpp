#include "flockbridge/protocol/smr/link.hpp"

#include <algorithm>

namespace flockbridge::protocol::smr {
namespace {

/// What each poll of kPolls fills in, and the module's name for reasons.
struct PolledModule {
  unsigned part;
  std::string_view name;
};
constexpr std::array<PolledModule, kPolls.size()> kPolled{{{part::kLeft, "the left motor"},
                                                           {part::kRight, "the right motor"},
                                                           {part::kLine, "the line sensor"},
                                                           {part::kInfrared, "the IR sensors"},
                                                           {part::kPower, "the power module"}}};

constexpr unsigned kAllParts = part::kLeft | part::kRight | part::kLine | part::kInfrared | part::kPower;

/// A decoded message whole again, whatever its type.
Bytes whole(std::uint8_t type, ByteView body) {
  return encode_message(static_cast<MessageType>(type), body);
}

void append(Bytes& to, const Bytes& bytes) {
  to.insert(to.end(), bytes.begin(), bytes.end());
}

}  // namespace

Link::Link(LinkSettings settings, LinkEvents& events) : settings_(settings), events_(events) {}

void Link::port_opened(SteadyTime now) {
  open_ = true;
  decoder_.abandon();
  if (!epoch_) epoch_ = now;
  next_period_ = now;
  last_bytes_ = now;
  period_.reset();
  missed_.fill(0);
  silent_periods_ = 0;
  set_state(LinkState::Handshaking, "waiting for the modules to answer");
}

void Link::port_closed(std::string_view reason) {
  open_ = false;
  decoder_.abandon();
  period_.reset();
  const Error error{"the SMR's bus closed before the message went out: " + std::string(reason), ErrorCode::LinkLost};
  while (!queue_.empty()) {
    const CommandToken token = queue_.front().token;
    queue_.pop_front();
    ++stats_.commands_failed;
    part_done(token, &error);
  }
  set_state(LinkState::Down, std::string(reason));
}

void Link::bytes_received(ByteView bytes, SteadyTime now) {
  last_bytes_ = now;
  decoder_.feed(bytes);
  relay_.clear();
  unsigned filled = 0;
  while (auto message = decoder_.next()) {
    if (message->type != static_cast<std::uint8_t>(MessageType::Bus)) {
      ++stats_.foreign_messages;
      continue;
    }
    append(relay_, whole(message->type, message->body));
    if (!period_) continue;
    const unsigned part = apply_reply(message->body, period_->reading);
    if (part == 0) continue;
    ++stats_.replies;
    filled |= part;
    if (part == part::kPower) {
      const bool on = (period_->reading.digital & power_status::kPowerOn) != 0;
      if (on) {
        power_off_count_ = 0;
        if (std::exchange(power_reported_off_, false)) events_.power_switch(true);
      } else if (++power_off_count_ == settings_.power_off_replies && !power_reported_off_) {
        power_reported_off_ = true;
        ++stats_.power_off_requests;
        events_.power_switch(false);
      }
    }
  }
  if (!relay_.empty()) events_.bus_messages(relay_);
  if (filled == 0) return;
  if (silent_periods_ > 0 || state_ != LinkState::Up) {
    silent_periods_ = 0;
    for (std::size_t i = 0; i < kPolled.size(); ++i) {
      if ((filled & kPolled[i].part) != 0) missed_[i] = 0;
    }
    update_module_state();
  }
  if (!delivered_ && (period_->reading.parts & kAllParts) == kAllParts) {
    delivered_ = true;
    events_.period_complete(*period_);
  }
}

Result<Done> Link::submit(CommandToken token, ByteView messages, bool overriding) {
  if (!open_) return Error{"the SMR's bus is not open: " + reason_, ErrorCode::LinkDown};
  MessageDecoder decoder;
  decoder.feed(messages);
  std::vector<Bytes> parts;
  while (auto message = decoder.next()) {
    if (message->type == static_cast<std::uint8_t>(MessageType::Control) || !is_known_type(message->type)) {
      return Error{"not a message for the robot: " + describe(message->type, message->body)};
    }
    parts.push_back(whole(message->type, message->body));
  }
  if (decoder.in_message()) return Error{"the command ends inside a message"};
  if (parts.empty()) return Error{"empty command"};
  if (queue_.size() + parts.size() > settings_.max_queued) {
    return Error{"too many messages waiting for the bus (" + std::to_string(queue_.size()) + ")", ErrorCode::QueueFull};
  }
  pending_.emplace_back(token, Pending{parts.size(), std::nullopt});
  for (Bytes& part : parts) queue_.push_back(Queued{token, std::move(part), overriding});
  return Done{};
}

void Link::tick(SteadyTime now) {
  if (open_ && now >= next_period_) begin_period(now);
}

std::optional<SteadyTime> Link::next_deadline() const {
  if (!open_) return std::nullopt;
  return next_period_;
}

Bytes Link::shutdown_bytes() const {
  if (!open_) return {};
  Bytes bytes = encode_speed(module::kLeftSpeed, 0);
  append(bytes, encode_speed(module::kRightSpeed, 0));
  return bytes;
}

LinkStats Link::stats() const {
  LinkStats stats = stats_;
  stats.decoder = decoder_.stats();
  return stats;
}

void Link::begin_period(SteadyTime now) {
  if (period_) {
    finish_period();
    events_.period_ended();
  }
  // A message whose bytes stopped a whole period ago will not be finished.
  if (decoder_.in_message() && now - last_bytes_ >= settings_.period) decoder_.abandon();

  ++tick_;
  ++stats_.periods;
  count_lateness(now - next_period_);
  const auto since = std::chrono::duration_cast<std::chrono::microseconds>(now - *epoch_).count();
  const PeriodStart start{tick_, static_cast<std::uint32_t>(since)};

  // The period's client messages, in the order they came: the first speed
  // for each motor (a stop before any), then one other bus message.
  Bytes echoed;
  Bytes speeds;
  std::array<const Queued*, 2> speed_slot{};  // left, right
  std::vector<std::pair<CommandToken, std::optional<Error>>> outcomes;
  const Queued* other = nullptr;
  std::vector<const Queued*> kept;
  for (const Queued& queued : queue_) {
    const std::uint8_t type = static_cast<std::uint8_t>(queued.message[0] >> 5);
    const ByteView body = ByteView(queued.message).subspan(1);
    if (type != static_cast<std::uint8_t>(MessageType::Bus)) {
      ++stats_.dropped_messages;
      append(echoed, queued.message);
      outcomes.emplace_back(queued.token, Error{"the bridge has no place on the robot for " + describe(type, body) +
                                                " (only RS485 bus messages are sent)"});
      continue;
    }
    if (const auto speed = read_speed(body)) {
      const Queued*& slot = speed_slot[speed->module == module::kLeftSpeed ? 0 : 1];
      append(echoed, queued.message);
      if (slot != nullptr && slot->message == queued.message) {
        // The same speed twice (two stops, say): both are carried out.
        outcomes.emplace_back(queued.token, std::nullopt);
        continue;
      }
      if (slot != nullptr && !(queued.overriding && !slot->overriding)) {
        ++stats_.speed_conflicts;
        outcomes.emplace_back(
            queued.token,
            Error{std::string("another speed for the ") + (speed->module == module::kLeftSpeed ? "left" : "right") +
                      " motor came first in the same bus period (another client's, or the bridge's own stop)",
                  ErrorCode::Refused});
        continue;
      }
      if (slot != nullptr) {
        ++stats_.speed_conflicts;
        outcomes.emplace_back(slot->token, Error{"a stop took this period's place", ErrorCode::Cancelled});
      }
      slot = &queued;
      continue;
    }
    if (other == nullptr) {
      other = &queued;
      append(echoed, queued.message);
      continue;
    }
    kept.push_back(&queued);  // one other message a period, as SMRD sends them
  }
  for (std::size_t motor = 0; motor < speed_slot.size(); ++motor) {
    const Queued* slot = speed_slot[motor];
    if (slot == nullptr) continue;
    speeds_[motor] = static_cast<std::int8_t>(slot->message[2]);
    append(speeds, slot->message);
    outcomes.emplace_back(slot->token, std::nullopt);
  }
  Bytes bus = speeds;
  append(bus, encode_polls());
  if (other != nullptr) {
    append(bus, other->message);
    outcomes.emplace_back(other->token, std::nullopt);
  }
  if (bus.size() < kPeriodBytes) bus.resize(kPeriodBytes, Byte{0});

  std::deque<Queued> waiting;
  for (const Queued* queued : kept) waiting.push_back(*queued);
  queue_ = std::move(waiting);

  period_ = Period{start, Reading{}, now};
  delivered_ = false;
  events_.period_started(start, encode_period_start(start.tick, start.ts), echoed);
  events_.transmit(bus);
  stats_.bytes_sent += bus.size();
  for (auto& [token, error] : outcomes) {
    if (error) {
      ++stats_.commands_failed;
    } else {
      ++stats_.commands_sent;
    }
    part_done(token, error ? &*error : nullptr);
  }

  next_period_ += settings_.period;
  if (next_period_ <= now) {
    // Held up for a whole period or more: the periods missed are counted,
    // not made up in a burst, and the next is the next on the grid, so that
    // the periods never drift from their first one's time.
    const auto skipped = static_cast<std::uint64_t>((now - next_period_) / settings_.period) + 1;
    ++stats_.late_periods;
    stats_.skipped_periods += skipped;
    next_period_ += skipped * settings_.period;
  }
}

void Link::count_lateness(std::chrono::nanoseconds late) {
  using std::chrono::microseconds;
  if (late > microseconds(200)) ++stats_.started_over_200us;
  if (late > microseconds(500)) ++stats_.started_over_500us;
  if (late > microseconds(2000)) ++stats_.started_over_2ms;
  const auto us =
      static_cast<std::uint64_t>(std::max<std::int64_t>(0, std::chrono::duration_cast<microseconds>(late).count()));
  stats_.start_late_max_us = std::max(stats_.start_late_max_us, us);
}

void Link::finish_period() {
  const Reading& reading = period_->reading;
  for (std::size_t i = 0; i < kPolled.size(); ++i) {
    if ((reading.parts & kPolled[i].part) != 0) {
      missed_[i] = 0;
    } else {
      ++missed_[i];
      ++stats_.missed_replies;
    }
  }
  if (reading.parts == 0) {
    ++silent_periods_;
  } else {
    silent_periods_ = 0;
  }
  if (!delivered_ && reading.parts != 0) {
    ++stats_.incomplete_periods;
    delivered_ = true;
    events_.period_complete(*period_);
  }
  update_module_state();
}

void Link::update_module_state() {
  if (!open_) return;
  if (silent_periods_ >= settings_.bus_loss_periods) {
    const auto silent_ms = std::chrono::duration_cast<std::chrono::milliseconds>(settings_.period * silent_periods_);
    if (state_ == LinkState::Up) ++stats_.stale;
    const LinkState state = state_ == LinkState::Handshaking ? LinkState::Handshaking : LinkState::Stale;
    // The reason stays the same while the silence lasts: no event every period.
    if (state_ != state) set_state(state, "no module has answered for " + std::to_string(silent_ms.count()) + " ms");
    return;
  }
  if (silent_periods_ > 0 && state_ != LinkState::Up) return;
  std::string silent;
  for (std::size_t i = 0; i < kPolled.size(); ++i) {
    if (missed_[i] < settings_.module_loss_periods) continue;
    silent += (silent.empty() ? "" : ", ") + std::string(kPolled[i].name);
  }
  set_state(LinkState::Up, silent.empty() ? std::string{} : "no answer from " + silent);
}

void Link::part_done(CommandToken token, const Error* error) {
  const auto found =
      std::find_if(pending_.begin(), pending_.end(), [&](const auto& entry) { return entry.first == token; });
  if (found == pending_.end()) return;
  Pending& pending = found->second;
  if (error != nullptr && !pending.error) pending.error = *error;
  if (--pending.remaining > 0) return;
  const std::optional<Error> first = std::move(pending.error);
  pending_.erase(found);
  events_.command_finished(token, first ? &*first : nullptr);
}

void Link::set_state(LinkState state, std::string reason) {
  if (state == state_ && reason == reason_) return;
  state_ = state;
  reason_ = std::move(reason);
  events_.link_changed(state_, reason_);
}

std::vector<std::pair<std::string, std::uint64_t>> link_counters(const LinkStats& l) {
  return {{"messages_received", l.decoder.messages},
          {"unknown_type", l.decoder.unknown_type},
          {"incomplete", l.decoder.incomplete},
          {"periods", l.periods},
          {"late_periods", l.late_periods},
          {"skipped_periods", l.skipped_periods},
          {"started_over_200us", l.started_over_200us},
          {"started_over_500us", l.started_over_500us},
          {"started_over_2ms", l.started_over_2ms},
          {"start_late_max_us", l.start_late_max_us},
          {"bytes_sent", l.bytes_sent},
          {"replies", l.replies},
          {"foreign_messages", l.foreign_messages},
          {"missed_replies", l.missed_replies},
          {"incomplete_periods", l.incomplete_periods},
          {"commands_sent", l.commands_sent},
          {"speed_conflicts", l.speed_conflicts},
          {"dropped_messages", l.dropped_messages},
          {"commands_failed", l.commands_failed},
          {"stale", l.stale},
          {"power_off_requests", l.power_off_requests}};
}

}  // namespace flockbridge::protocol::smr
