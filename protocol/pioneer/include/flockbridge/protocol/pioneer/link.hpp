// The bridge's side of the link to an AROS robot, as a state machine: no
// I/O, no clock (the caller feeds bytes, the time and the timer), like the
// Flockbot's Link.
//
// Conditions of the problem (the manuals, ARIA, aros.md):
// - a robot that is not connected answers SYNC0, SYNC1 and SYNC2 in turn,
//   SYNC2 with its name, class and subclass; OPEN then starts its SIPs
//   (every 100 ms); CLOSE ends the connection;
// - an open robot takes types 0, 1, 2 as PULSE, OPEN, CLOSE: a robot left
//   open by an earlier client (or by this bridge before a restart) does not
//   answer SYNC0 but goes on sending SIPs. Such a robot is sent CLOSE, and
//   the sequence starts again;
// - the robot stops its motors when no packet has come from its client for
//   its watchdog time (2 s by default): the link sends PULSE whenever it has
//   sent nothing for pulse_interval, whether or not anyone drives;
// - there are no acknowledgements: a command is done once it is on the line.
//   The AmigoSH manual asks for 3-5 ms between commands, so commands are
//   spaced by command_spacing; PULSE never waits behind them;
// - a robot that sends no SIP for sip_timeout is taken for lost: the link
//   reports Stale and starts the SYNC sequence again.
//
// The sequence once open: CONFIG 1 (the configuration packet is kept, for
// clients that ask for it; after config_timeout the link goes on without),
// ENABLE 1, and the link is Up with the first SIP after it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flockbridge/protocol/pioneer/commands.hpp"
#include "flockbridge/protocol/pioneer/packet.hpp"
#include "flockbridge/protocol/pioneer/sip.hpp"
#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/clock.hpp"
#include "flockbridge/protocol/robot_link.hpp"

namespace flockbridge::protocol::pioneer {

struct LinkSettings {
  std::chrono::milliseconds sync_timeout{1000};  ///< wait for each SYNC answer, as ARIA does
  unsigned sync_retries = 4;                     ///< quick attempts before the link is reported down
  std::chrono::milliseconds sync_slow_interval{5000};
  std::chrono::milliseconds config_timeout{1000};
  std::chrono::milliseconds pulse_interval{500};
  std::chrono::milliseconds sip_timeout{1000};
  std::chrono::milliseconds packet_gap{100};  ///< a packet whose bytes stop this long is abandoned
  std::chrono::milliseconds command_spacing{5};
  std::size_t max_queued_commands = 64;
};

struct LinkStats {
  DecoderStats decoder;
  std::uint64_t packets_sent = 0;
  std::uint64_t sync_attempts = 0;
  std::uint64_t connects = 0;     ///< times the link came up
  std::uint64_t closes_sent = 0;  ///< CLOSEs to a robot found already open
  std::uint64_t pulses_sent = 0;
  std::uint64_t sips = 0;
  std::uint64_t bad_sips = 0;  ///< SIPs that passed the checksum but not decode_standard_sip
  std::uint64_t stale = 0;
  std::uint64_t commands_sent = 0;
  std::uint64_t commands_failed = 0;
};

/// The counters of a stats message's "link" object, by name, in order.
[[nodiscard]] std::vector<std::pair<std::string, std::uint64_t>> link_counters(const LinkStats& stats);

class LinkEvents {
 public:
  LinkEvents() = default;
  LinkEvents(const LinkEvents&) = delete;
  LinkEvents& operator=(const LinkEvents&) = delete;
  virtual ~LinkEvents() = default;

  /// Write these bytes (one whole packet) to the line.
  virtual void transmit(ByteView packet) = 0;
  virtual void link_changed(LinkState state, std::string_view reason) = 0;
  /// A SIP, decoded, and the packet's type and payload as they came.
  virtual void sip_received(const StandardSip& sip, Byte type, ByteView payload) = 0;
  /// Another packet from the robot (configuration, I/O, ...).
  virtual void packet_received(Byte type, ByteView payload) = 0;
  /// A command is on the line (error is nullptr), or could not be sent.
  virtual void command_finished(CommandToken token, const Error* error) = 0;
  virtual void note(std::string_view /*what*/) {}
};

class Link {
 public:
  Link(LinkSettings settings, LinkEvents& events);

  void port_opened(SteadyTime now);
  void port_closed(std::string_view reason);
  void bytes_received(ByteView bytes, SteadyTime now);

  /// Queues a command. Refused at once when the link is not up (E_STOP and
  /// STOP go out whenever the robot is open) or when the queue is full.
  [[nodiscard]] Result<Done> submit(CommandToken token, const Command& command, SteadyTime now);

  void tick(SteadyTime now);
  [[nodiscard]] std::optional<SteadyTime> next_deadline() const;

  /// What to write before closing the port at shutdown: STOP, then CLOSE.
  /// Nothing when the robot is not open.
  [[nodiscard]] Bytes shutdown_packets() const;

  [[nodiscard]] LinkState state() const noexcept { return state_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  /// The robot's SYNC2 answer; empty until the first connection.
  [[nodiscard]] const std::optional<RobotIdentity>& identity() const noexcept { return identity_; }
  /// The configuration packet as it came (whole packet), and decoded.
  [[nodiscard]] const Bytes& config_packet() const noexcept { return config_packet_; }
  [[nodiscard]] const std::optional<ConfigPacket>& config() const noexcept { return config_; }
  [[nodiscard]] LinkStats stats() const;
  [[nodiscard]] const LinkSettings& settings() const noexcept { return settings_; }
  void set_settings(const LinkSettings& settings) { settings_ = settings; }

 private:
  enum class Phase { Closed, Sync0, Sync1, Sync2, AwaitConfig, AwaitSip, Open };

  struct Queued {
    CommandToken token;
    Bytes packet;
  };

  /// Acts on every packet the decoder has found.
  void drain_decoder(SteadyTime now);
  void on_packet(Byte type, ByteView payload, SteadyTime now);
  void send(const Bytes& packet, SteadyTime now);
  void start_sync(SteadyTime now);
  void send_sync(Byte which, SteadyTime now);
  void sync_timed_out(SteadyTime now);
  void opened(SteadyTime now);
  void go_stale(SteadyTime now);
  void send_queued(SteadyTime now);
  void fail_queued(const std::string& why);
  void set_state(LinkState state, std::string reason);
  [[nodiscard]] bool robot_open() const noexcept {
    return phase_ == Phase::AwaitConfig || phase_ == Phase::AwaitSip || phase_ == Phase::Open;
  }

  LinkSettings settings_;
  LinkEvents& events_;
  PacketDecoder decoder_;
  LinkStats stats_;
  LinkState state_ = LinkState::Down;
  std::string reason_ = "serial port not open";
  Phase phase_ = Phase::Closed;
  unsigned attempts_ = 0;
  /// stats_.sync_attempts when the last CLOSE went out: one CLOSE per attempt.
  std::uint64_t attempts_closed_ = ~std::uint64_t{0};
  SteadyTime phase_deadline_{};
  SteadyTime last_sent_{};
  SteadyTime last_sip_{};
  SteadyTime last_bytes_{};
  std::optional<RobotIdentity> identity_;
  Bytes config_packet_;
  std::optional<ConfigPacket> config_;
  std::deque<Queued> queue_;
};

}  // namespace flockbridge::protocol::pioneer
