// A port-2005 client that behaves exactly as the Flockbot's 2014 student
// client does (babsher/flockbot-sokoban, src/run/flockbot.py), written from
// reading that program:
//
// - its connection test sends the five bytes "hello" with no length byte, and
//   then blocks until any one message arrives;
// - it reads the length byte as a *signed* byte, then that many bytes;
// - it looks the first two letters of each message up in a table of three,
//   and unpacks the message to an exact size: "AC" and "DM" as 3 bytes
//   ('=3s'), "SP" as 28 ('=2shhhhhh??hhhhh2s');
// - anything else (an unknown code, a size that does not unpack, a length of
//   0 or below) raises in its reader thread, which dies: the program hangs
//   without a word. Here the client records how it died, and reads nothing
//   more, so that a test sees it;
// - it packs its commands as that client does: RT + inner length + payload,
//   a 16-bit distance for DMD and a 16-bit angle for DRD, SF with 4 more bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "support/tcp_client.hpp"

namespace flockbridge::testing {

class LegacyClient {
 public:
  struct Message {
    std::string code;  ///< "AC", "SP" or "DM"
    std::string body;  ///< the whole message, without its length byte
  };

  explicit LegacyClient(std::uint16_t port, int receive_buffer = 0) : socket_(port, receive_buffer) {}

  /// testConnection(): "hello", then block until one message. Returns it.
  std::optional<Message> test_connection(std::chrono::milliseconds timeout = 10s);
  void register_sensors(std::int32_t rate);
  void stop_sensor();
  void open_claw() { retransmit("DGO"); }
  void close_claw() { retransmit("DGC"); }
  void move_speed(std::int8_t speed);
  void move_distance(std::int8_t speed, std::uint16_t dist);
  void move_wheels(std::int8_t left, std::int8_t right);
  /// rotate(speed, deg), with the angle as its programs give it (-90: left).
  void rotate(std::int8_t speed, std::int16_t deg);
  void stop();
  /// Any payload in the client's RT form (the camera, which it has no method for).
  void retransmit(const std::string& payload);

  /// The next message the client's table parses; nothing on a timeout, or
  /// once the client has died.
  std::optional<Message> read(std::chrono::milliseconds timeout = 5s);
  /// The next message with this code, skipping others.
  std::optional<Message> read_code(const std::string& code, std::chrono::milliseconds timeout = 5s);
  /// Reads everything that is there now; returns how many messages.
  std::size_t drain();

  [[nodiscard]] bool dead() const noexcept { return !death_.empty(); }
  /// What would have killed the original's reader thread ("" while alive).
  [[nodiscard]] const std::string& death() const noexcept { return death_; }
  /// How many messages of each code it has parsed.
  [[nodiscard]] const std::map<std::string, std::size_t>& counts() const noexcept { return counts_; }
  [[nodiscard]] TcpClient& socket() noexcept { return socket_; }

 private:
  /// One message from what is buffered, if a whole one is there.
  std::optional<Message> parse_buffered();

  TcpClient socket_;
  std::string death_;
  std::map<std::string, std::size_t> counts_;
};

}  // namespace flockbridge::testing
