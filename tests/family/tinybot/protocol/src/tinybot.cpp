#include "flockbridge/protocol/tinybot/tinybot.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numbers>
#include <vector>

namespace flockbridge::protocol::tinybot {
namespace {

/// The words of a line, split on single spaces.
std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  while (!line.empty()) {
    const std::size_t space = line.find(' ');
    words.push_back(line.substr(0, space));
    if (space == std::string_view::npos) break;
    line.remove_prefix(space + 1);
  }
  return words;
}

template <typename Number>
std::optional<Number> number_of(std::string_view word) {
  Number value{};
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (error != std::errc{} || end != word.data() + word.size()) return std::nullopt;
  return value;
}

Bytes bytes_of(std::string_view text) {
  const ByteView view = as_bytes(text);
  return Bytes(view.begin(), view.end());
}

}  // namespace

std::optional<Reading> read_reading(std::string_view line) {
  const auto words = words_of(line);
  if (words.size() != 8 || words[0] != "S") return std::nullopt;
  const auto left = number_of<std::int64_t>(words[1]);
  const auto right = number_of<std::int64_t>(words[2]);
  const auto bumped = number_of<int>(words[6]);
  const auto battery = number_of<int>(words[7]);
  if (!left || !right || !bumped || !battery || (*bumped != 0 && *bumped != 1) || *battery < 0) return std::nullopt;
  Reading reading{*left, *right, {}, *bumped == 1, *battery};
  for (std::size_t i = 0; i < reading.ranges_mm.size(); ++i) {
    const auto range = number_of<int>(words[3 + i]);
    if (!range || *range < -1) return std::nullopt;
    if (*range >= 0) reading.ranges_mm[i] = *range;
  }
  return reading;
}

std::string reading_line(const Reading& r) {
  std::string line = "S " + std::to_string(r.left_mm) + " " + std::to_string(r.right_mm);
  for (const auto& range : r.ranges_mm) line += " " + std::to_string(range.value_or(-1));
  return line + " " + (r.bumped ? "1" : "0") + " " + std::to_string(r.battery_mv) + "\n";
}

Bytes encode_speeds(Speeds speeds) {
  const int left = std::clamp(speeds.left_mm_s, -kMaxWheelMmS, kMaxWheelMmS);
  const int right = std::clamp(speeds.right_mm_s, -kMaxWheelMmS, kMaxWheelMmS);
  return bytes_of("V " + std::to_string(left) + " " + std::to_string(right) + "\n");
}

Bytes encode_stop() {
  return bytes_of("X\n");
}

Bytes encode_ping() {
  return bytes_of("PING\n");
}

Bytes encode_pong() {
  return bytes_of("PONG\n");
}

std::optional<Speeds> read_command(std::string_view line) {
  if (line == "X") return Speeds{};
  const auto words = words_of(line);
  if (words.size() != 3 || words[0] != "V") return std::nullopt;
  const auto left = number_of<int>(words[1]);
  const auto right = number_of<int>(words[2]);
  if (!left || !right || std::abs(*left) > kMaxWheelMmS || std::abs(*right) > kMaxWheelMmS) return std::nullopt;
  return Speeds{*left, *right};
}

std::optional<Speeds> read_command(ByteView command) {
  std::string_view text(reinterpret_cast<const char*>(command.data()), command.size());
  if (text.empty() || text.back() != '\n') return std::nullopt;
  text.remove_suffix(1);
  if (text.find('\n') != std::string_view::npos) return std::nullopt;
  return read_command(text);
}

RobotGeometry robot_geometry() {
  RobotGeometry geometry;
  geometry.radius_mm = kRadiusMm;
  geometry.wheel_base_mm = kWheelBaseMm;
  geometry.max_v_mm_s = kMaxWheelMmS;
  for (std::size_t i = 0; i < kRangeNames.size(); ++i) {
    const double rad = kRangeDeg[i] * std::numbers::pi / 180;
    geometry.ranges.push_back(RangeSensor{std::string(kRangeNames[i]), RangeKind::Ir, kRangeDeg[i],
                                          std::round(kRadiusMm * std::cos(rad)), std::round(kRadiusMm * std::sin(rad)),
                                          kRangeMaxMm});
  }
  geometry.bumpers = {"front"};
  return geometry;
}

void LineReader::feed(ByteView bytes) {
  for (const Byte byte : bytes) {
    const char c = static_cast<char>(byte);
    if (c == '\n') {
      if (overlong_) {
        ++dropped_;
      } else {
        if (!pending_.empty() && pending_.back() == '\r') pending_.pop_back();
        // A line not yet taken is kept: next() hands them out in order.
        ready_ += pending_;
        ready_.push_back('\n');
      }
      pending_.clear();
      overlong_ = false;
    } else if (!overlong_) {
      pending_.push_back(c);
      if (pending_.size() > kLongestLine) {
        overlong_ = true;
        pending_.clear();
      }
    }
  }
}

std::optional<std::string> LineReader::next() {
  if (taken_ >= ready_.size()) {
    ready_.clear();
    taken_ = 0;
    return std::nullopt;
  }
  const std::size_t end = ready_.find('\n', taken_);
  std::string line = ready_.substr(taken_, end - taken_);
  taken_ = end + 1;
  return line;
}

void LineReader::clear() noexcept {
  pending_.clear();
  ready_.clear();
  taken_ = 0;
  overlong_ = false;
}

void Link::port_opened(SteadyTime now) {
  open_ = true;
  lines_.clear();
  set_state(LinkState::Handshaking, "waiting for the robot's PONG");
  ping(now);
}

void Link::bytes_received(ByteView bytes, SteadyTime now) {
  lines_.feed(bytes);
  while (const auto line = lines_.next()) on_line(*line, now);
}

void Link::on_line(const std::string& line, SteadyTime now) {
  ++stats_.lines;
  if (line == "PONG") {
    last_heard_ = now;
    if (state_ != LinkState::Up) set_state(LinkState::Up, "");
    return;
  }
  const auto reading = read_reading(line);
  if (!reading) {
    ++stats_.unknown_lines;
    events_.note("not a tinybot line: " + line.substr(0, 40));
    return;
  }
  last_heard_ = now;
  if (state_ != LinkState::Up) return;  // a reading before the PONG: the robot is still starting
  ++stats_.readings;
  events_.reading(*reading, reading_line(*reading));
}

void Link::port_closed(std::string_view reason) {
  open_ = false;
  set_state(LinkState::Down, std::string(reason));
}

void Link::tick(SteadyTime now) {
  if (!open_) return;
  if (state_ == LinkState::Up && now - last_heard_ >= kQuietLimit) {
    ++stats_.times_lost;
    set_state(LinkState::Stale, "the robot has sent nothing for 500 ms");
  }
  if (state_ != LinkState::Up && now >= next_ping_) ping(now);
}

std::optional<SteadyTime> Link::next_deadline() const {
  if (!open_) return std::nullopt;
  if (state_ == LinkState::Up) return last_heard_ + kQuietLimit;
  return next_ping_;
}

Result<Done> Link::submit(CommandToken token, ByteView command) {
  if (state_ != LinkState::Up) {
    ++stats_.commands_failed;
    Error error{"the robot link is " + std::string(link_state_name(state_)), ErrorCode::LinkDown};
    return error;
  }
  events_.transmit(command);
  ++stats_.commands_sent;
  events_.command_finished(token, nullptr);
  return Done{};
}

Bytes Link::shutdown_bytes() const {
  return open_ ? encode_stop() : Bytes{};
}

LinkStats Link::stats() const noexcept {
  LinkStats stats = stats_;
  stats.dropped_lines = lines_.dropped();
  return stats;
}

void Link::set_state(LinkState state, std::string reason) {
  if (state == state_ && reason == reason_) return;
  state_ = state;
  reason_ = std::move(reason);
  events_.link_changed(state_, reason_);
}

void Link::ping(SteadyTime now) {
  ++stats_.pings;
  events_.transmit(encode_ping());
  next_ping_ = now + kPingEvery;
}

}  // namespace flockbridge::protocol::tinybot
