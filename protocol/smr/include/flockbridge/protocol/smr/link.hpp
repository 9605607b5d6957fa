// The bridge's side of the SMR's RS485 bus, as a state machine: no I/O, no
// clock (the caller feeds bytes, the time and the timer), like the other
// families' links. It does SMRD's job on the bus (smrd.c, seed 000):
//
// - every period (10 ms) it ends the period before, numbers the new one
//   (`tick`, from 1) and stamps it (microseconds since the link's first
//   period, wrapping), then writes, in one go: the period's motor commands
//   first, the polls of every module (kPolls, each with its zeros), at most
//   one other queued bus message, and zeros up to 104 bytes;
// - arbitration as SMRD's: per period the first speed command for the left
//   motor (0x11) and the first for the right (0x12) go on the bus; later
//   ones in the same period are not sent (counted, and their commands fail).
//   A stop (both motors to zero, submitted as overriding) always wins: it
//   takes the place of whatever speeds were waiting;
// - every message it sent for a client is echoed to SMRD's clients with the
//   period's START (SMRD does this for the losers too);
// - whatever the modules answer is relayed as it came (bus_messages: whole
//   messages, zero bytes included, as SMRD relays them; but only bus
//   messages: a message of another type can only be noise on the line, and
//   a START or END made of noise would mislead every client) and read into the
//   period's Reading, delivered once every polled module has answered, or
//   at the period's end with what came;
// - a module that misses `module_loss_periods` periods in a row is reported
//   (the link stays up, its reason names the silent modules); when no module
//   has answered for `bus_loss_periods` the link is Stale; the first answer
//   brings it back Up. Polling never stops while the port is open;
// - the power module's switch: off for 25 power replies in a row (SMRD then
//   runs poweroff) is reported once; the bridge never powers anything off.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/clock.hpp"
#include "flockbridge/protocol/robot_link.hpp"
#include "flockbridge/protocol/smr/bus.hpp"
#include "flockbridge/protocol/smr/messages.hpp"

namespace flockbridge::protocol::smr {

struct LinkSettings {
  std::chrono::microseconds period{10000};
  unsigned module_loss_periods = 10;  ///< a module silent this many periods in a row is reported
  unsigned bus_loss_periods = 50;     ///< no module for this many periods: the link is stale
  unsigned power_off_replies = 25;    ///< power replies in a row with the switch off, as SMRD counts
  std::size_t max_queued = 64;        ///< client messages waiting for their period
};

struct LinkStats {
  DecoderStats decoder;
  std::uint64_t periods = 0;
  std::uint64_t late_periods = 0;     ///< periods that began a whole period late (the process was held up)
  std::uint64_t skipped_periods = 0;  ///< periods on the 10 ms grid that never began, for being so late
  // How late each period began after its deadline, as the bridge saw it
  // (the machine's timer and the bridge's own loop together): periods later
  // than 0.2 ms, 0.5 ms and 2 ms (each counts every period over its mark),
  // and the latest.
  std::uint64_t started_over_200us = 0;
  std::uint64_t started_over_500us = 0;
  std::uint64_t started_over_2ms = 0;
  std::uint64_t start_late_max_us = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t replies = 0;             ///< module replies read into a period
  std::uint64_t foreign_messages = 0;    ///< messages of a type the bus does not carry: noise, not relayed
  std::uint64_t missed_replies = 0;      ///< polled modules that did not answer within their period
  std::uint64_t incomplete_periods = 0;  ///< periods delivered without every module's reply
  std::uint64_t commands_sent = 0;       ///< client messages put on the bus
  std::uint64_t speed_conflicts = 0;     ///< speed commands that lost their period to an earlier one
  std::uint64_t dropped_messages = 0;    ///< client messages with no place on the bus (RS232, simulator)
  std::uint64_t commands_failed = 0;
  std::uint64_t stale = 0;
  std::uint64_t power_off_requests = 0;
};

/// The counters of a stats message's "link" object, by name, in order.
[[nodiscard]] std::vector<std::pair<std::string, std::uint64_t>> link_counters(const LinkStats& stats);

/// One period as the modules answered it.
struct Period {
  PeriodStart start;
  Reading reading;
  SteadyTime began{};
};

class LinkEvents {
 public:
  LinkEvents() = default;
  LinkEvents(const LinkEvents&) = delete;
  LinkEvents& operator=(const LinkEvents&) = delete;
  virtual ~LinkEvents() = default;

  /// Write these bytes to the bus.
  virtual void transmit(ByteView bytes) = 0;
  virtual void link_changed(LinkState state, std::string_view reason) = 0;
  /// The period before has ended (SMRD's END), when there was one.
  virtual void period_ended() = 0;
  /// A period has begun: `start_message` is its START (E9 00 tick ts),
  /// `echoed` the client messages it put on the bus, whole, in order.
  virtual void period_started(const PeriodStart& start, ByteView start_message, ByteView echoed) = 0;
  /// Whole messages from the bus, as they came (one call per read).
  virtual void bus_messages(ByteView messages) = 0;
  /// A period's reading: every polled module answered, or the period ended.
  virtual void period_complete(const Period& period) = 0;
  /// A client's messages are on the bus (error is nullptr), or were not sent.
  virtual void command_finished(CommandToken token, const Error* error) = 0;
  /// The power module's switch went off (held for power_off_replies) or back on.
  virtual void power_switch(bool on) = 0;
  virtual void note(std::string_view /*what*/) {}
};

class Link {
 public:
  Link(LinkSettings settings, LinkEvents& events);

  void port_opened(SteadyTime now);
  void port_closed(std::string_view reason);
  void bytes_received(ByteView bytes, SteadyTime now);

  /// Queues one or more whole client messages (as SMRD's clients send them)
  /// for the next period. `overriding`: a stop, which replaces the period's
  /// speed commands instead of losing to them. Refused at once when the port
  /// is not open, the bytes are not whole messages of the bus, or the queue
  /// is full.
  [[nodiscard]] Result<Done> submit(CommandToken token, ByteView messages, bool overriding = false);

  void tick(SteadyTime now);
  [[nodiscard]] std::optional<SteadyTime> next_deadline() const;

  /// Both motors to zero, for the line before it closes; nothing when the port is not open.
  [[nodiscard]] Bytes shutdown_bytes() const;

  [[nodiscard]] LinkState state() const noexcept { return state_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  [[nodiscard]] LinkStats stats() const;
  [[nodiscard]] const LinkSettings& settings() const noexcept { return settings_; }
  void set_settings(const LinkSettings& settings) { settings_ = settings; }
  /// The current period's number (0 before the first).
  [[nodiscard]] std::uint32_t current_tick() const noexcept { return tick_; }
  /// The speeds last put on the bus for the left and right motor (as on the
  /// bus: the right one mirrored).
  [[nodiscard]] std::int8_t left_speed() const noexcept { return speeds_[0]; }
  [[nodiscard]] std::int8_t right_speed() const noexcept { return speeds_[1]; }
  /// Whether the power module's switch has been reported off.
  [[nodiscard]] bool power_switch_off() const noexcept { return power_reported_off_; }

 private:
  /// A client message waiting for its period.
  struct Queued {
    CommandToken token = 0;
    Bytes message;  ///< whole
    bool overriding = false;
  };
  /// A command's messages still waiting, and its first error.
  struct Pending {
    std::size_t remaining = 0;
    std::optional<Error> error;
  };

  void begin_period(SteadyTime now);
  void count_lateness(std::chrono::nanoseconds late);
  void finish_period();
  void part_done(CommandToken token, const Error* error);
  void set_state(LinkState state, std::string reason);
  void update_module_state();

  LinkSettings settings_;
  LinkEvents& events_;
  MessageDecoder decoder_;
  LinkStats stats_;
  LinkState state_ = LinkState::Down;
  std::string reason_ = "serial port not open";
  bool open_ = false;
  std::optional<SteadyTime> epoch_;  ///< the first period's beginning: ts 0
  SteadyTime next_period_{};
  SteadyTime last_bytes_{};
  std::uint32_t tick_ = 0;
  std::optional<Period> period_;  ///< the period under way
  bool delivered_ = false;        ///< its reading has gone out
  std::array<unsigned, kPolls.size()> missed_{};
  unsigned silent_periods_ = 0;  ///< periods in a row without any reply
  unsigned power_off_count_ = 0;
  bool power_reported_off_ = false;
  std::array<std::int8_t, 2> speeds_{};  ///< last sent: left, right
  std::deque<Queued> queue_;
  std::vector<std::pair<CommandToken, Pending>> pending_;
  Bytes relay_;  ///< scratch: one read's whole messages
};

}  // namespace flockbridge::protocol::smr
