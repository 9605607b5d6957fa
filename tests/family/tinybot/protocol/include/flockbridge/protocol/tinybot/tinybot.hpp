// The tinybot: a robot that exists only for the tests. It is the smallest
// family the bridge can serve, and it lives under tests/ to prove that a
// family is one folder and one line in the list of families
// (docs/adding-a-family.md): every test that covers all families covers it
// too, or fails.
//
// Its serial line carries text lines, each ending in "\n":
// - the host sends "PING" until the robot answers "PONG"; the robot then
//   streams a reading every 50 ms, "S <left_mm> <right_mm> <left_range>
//   <front_range> <right_range> <bumped> <battery_mv>": each wheel's travel
//   since the robot started (forward positive), its three range sensors'
//   distances in mm (-1: nothing in range), whether its front bumper is
//   pressed (0 or 1), and its battery;
// - "V <left_mm_s> <right_mm_s>" sets the wheels' speeds until the next,
//   "X" stops both wheels; neither is answered.
// A robot that sends nothing for kQuietLimit is taken for lost: the link
// goes stale and pings it again. Standard library only, no I/O.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/clock.hpp"
#include "flockbridge/protocol/robot_link.hpp"
#include "flockbridge/protocol/robot_model.hpp"

namespace flockbridge::protocol::tinybot {

inline constexpr std::size_t kLongestLine = 80;  ///< longer lines are noise, dropped
inline constexpr int kMaxWheelMmS = 500;         ///< a wheel's fastest, either way
inline constexpr double kWheelBaseMm = 200;
inline constexpr double kRadiusMm = 120;
inline constexpr double kRangeMaxMm = 1500;
inline constexpr std::chrono::milliseconds kReadingPeriod{50};
inline constexpr std::chrono::milliseconds kPingEvery{250};
inline constexpr std::chrono::milliseconds kQuietLimit{500};

/// The range sensors, in a reading's order: where each looks, from the front.
inline constexpr std::array<std::string_view, 3> kRangeNames{"left", "front", "right"};
inline constexpr std::array<double, 3> kRangeDeg{90, 0, -90};

struct Reading {
  std::int64_t left_mm = 0;
  std::int64_t right_mm = 0;
  std::array<std::optional<int>, 3> ranges_mm;  ///< by kRangeNames; nothing in range
  bool bumped = false;
  int battery_mv = 0;
  friend bool operator==(const Reading&, const Reading&) = default;
};

struct Speeds {
  int left_mm_s = 0;
  int right_mm_s = 0;
  friend bool operator==(const Speeds&, const Speeds&) = default;
};

/// A reading's line (without its "\n"), or nothing when it is not one.
[[nodiscard]] std::optional<Reading> read_reading(std::string_view line);
[[nodiscard]] std::string reading_line(const Reading& reading);  ///< with its "\n"

/// "V l r\n" (each clamped to kMaxWheelMmS), "X\n", "PING\n", "PONG\n".
[[nodiscard]] Bytes encode_speeds(Speeds speeds);
[[nodiscard]] Bytes encode_stop();
[[nodiscard]] Bytes encode_ping();
[[nodiscard]] Bytes encode_pong();
/// The speeds a command sets: {0, 0} for a stop; nothing for what is not a
/// whole command line.
[[nodiscard]] std::optional<Speeds> read_command(std::string_view line);
[[nodiscard]] std::optional<Speeds> read_command(ByteView command);

/// The robot as the robot model describes it: three IR rangers (left,
/// front, right) on the rim of a round body on two wheels, one bumper.
[[nodiscard]] RobotGeometry robot_geometry();

/// Cuts a byte stream into lines; a line longer than kLongestLine is
/// dropped whole and counted.
class LineReader {
 public:
  void feed(ByteView bytes);
  /// The next whole line, without its "\n" (and "\r"), or nothing yet.
  [[nodiscard]] std::optional<std::string> next();
  [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_; }
  void clear() noexcept;

 private:
  std::string pending_;
  std::string ready_;
  bool has_ready_ = false;
  bool overlong_ = false;
  std::size_t taken_ = 0;
  std::uint64_t dropped_ = 0;
};

class LinkEvents {
 public:
  LinkEvents() = default;
  LinkEvents(const LinkEvents&) = delete;
  LinkEvents& operator=(const LinkEvents&) = delete;
  virtual ~LinkEvents() = default;

  virtual void transmit(ByteView bytes) = 0;
  virtual void link_changed(LinkState state, std::string_view reason) = 0;
  /// A reading, and its line as it came (with its "\n").
  virtual void reading(const Reading& reading, std::string_view line) = 0;
  /// A command went on the line (error is nullptr), or was not sent.
  virtual void command_finished(CommandToken token, const Error* error) = 0;
  virtual void note(std::string_view /*what*/) {}
};

struct LinkStats {
  std::uint64_t lines = 0;
  std::uint64_t readings = 0;
  std::uint64_t unknown_lines = 0;
  std::uint64_t dropped_lines = 0;  ///< too long
  std::uint64_t pings = 0;
  std::uint64_t commands_sent = 0;
  std::uint64_t commands_failed = 0;
  std::uint64_t times_lost = 0;
};

class Link {
 public:
  explicit Link(LinkEvents& events) : events_(events) {}

  void port_opened(SteadyTime now);
  void bytes_received(ByteView bytes, SteadyTime now);
  void port_closed(std::string_view reason);
  void tick(SteadyTime now);
  [[nodiscard]] std::optional<SteadyTime> next_deadline() const;

  /// Sends a command line now, or says why not (the link is not up).
  [[nodiscard]] Result<Done> submit(CommandToken token, ByteView command);
  /// What goes on the line before it closes: a stop, while the robot listens.
  [[nodiscard]] Bytes shutdown_bytes() const;

  [[nodiscard]] LinkState state() const noexcept { return state_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  [[nodiscard]] LinkStats stats() const noexcept;

 private:
  void set_state(LinkState state, std::string reason);
  void ping(SteadyTime now);
  void on_line(const std::string& line, SteadyTime now);

  LinkEvents& events_;
  LineReader lines_;
  LinkState state_ = LinkState::Down;
  std::string reason_ = "the serial port is not open";
  bool open_ = false;
  SteadyTime last_heard_{};
  SteadyTime next_ping_{};
  LinkStats stats_;
};

}  // namespace flockbridge::protocol::tinybot
