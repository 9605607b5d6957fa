// A client of port 8101 that behaves as an ARIA program does (ArRobot over
// TCP, as aros.md records it measured against the real library): the SYNC0,
// SYNC1, SYNC2 handshake with 1 s waits and restarts, OPEN 1, CONFIG 1 with
// a 1 s wait for the configuration packet, the limits from its parameters,
// ENABLE 1; while running, VEL and RVEL resent every 500 ms and PULSE after
// 500 ms of silence; when leaving, ENABLE 0, CLOSE 100 ms later, then the
// socket.
//
// It is strict as ARIA is: every packet from the bridge must have the AROS
// header, a count from 3 to 200 and the right checksum, and after the
// handshake be a SIP (0x32, 0x33) or the configuration packet (0x20).
// Anything else is recorded as a violation, which the tests check is none.
// It computes packets and checksums itself, from the manuals, so that a
// mistake in the bridge's codec cannot hide in it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/tcp_client.hpp"

namespace flockbridge::testing {

class AriaClient {
 public:
  struct Identity {
    std::string name;
    std::string type;
    std::string subtype;
  };
  struct Packet {
    std::uint8_t type = 0;
    std::string payload;
  };

  /// `max_segment` as for TcpClient.
  explicit AriaClient(std::uint16_t port, int max_segment = 0);

  /// The connect sequence. Returns the SYNC2 identity, or nothing when the
  /// handshake failed as ARIA's would (about 6.4 s of silence).
  std::optional<Identity> connect();
  /// Whether the configuration packet came after CONFIG 1.
  [[nodiscard]] bool has_config() const noexcept { return config_.has_value(); }
  [[nodiscard]] const std::optional<Packet>& config() const noexcept { return config_; }

  /// Sets the velocities ARIA sends (VEL, RVEL at once, then every 500 ms).
  void set_velocity(int mm_s, int deg_s);
  /// Sends a command packet: no argument, or an integer argument.
  void command(std::uint8_t number);
  void command(std::uint8_t number, int argument);

  /// Runs the client's cycle for `duration`: reads SIPs, resends velocities,
  /// sends PULSE. Returns the SIPs read.
  std::vector<Packet> run_for(std::chrono::milliseconds duration);
  /// Runs until a SIP for which `test` holds, at most `timeout`.
  template <typename Test>
  std::optional<Packet> run_until(Test test, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      for (Packet& sip : run_for(std::chrono::milliseconds(50))) {
        if (test(sip)) return sip;
      }
    }
    return std::nullopt;
  }
  /// Reads without sending anything (a program that hangs): returns the SIPs read.
  std::vector<Packet> listen_for(std::chrono::milliseconds duration);

  /// The leaving sequence: ENABLE 0, CLOSE 100 ms later; then the socket closes.
  void disconnect();
  /// Closes the socket at once, as a killed program's kernel does.
  void kill();

  [[nodiscard]] std::size_t sips() const noexcept { return sips_; }
  [[nodiscard]] const std::vector<std::string>& violations() const noexcept { return violations_; }
  [[nodiscard]] TcpClient& socket() noexcept { return socket_; }

  /// A SIP's fields (the standard SIP's fixed part).
  static int x(const Packet& sip);
  static int left_velocity(const Packet& sip);
  static int right_velocity(const Packet& sip);

 private:
  void send_packet(std::uint8_t type, const std::string& payload);
  /// Reads one packet within the deadline (sync answers and SIPs alike).
  std::optional<Packet> read_packet(std::chrono::steady_clock::time_point deadline);
  std::optional<Packet> await_type(std::uint8_t type, std::chrono::milliseconds timeout);

  TcpClient socket_;
  std::optional<Packet> config_;
  bool connected_ = false;
  std::optional<std::pair<int, int>> velocity_;
  std::chrono::steady_clock::time_point last_sent_{};
  std::chrono::steady_clock::time_point last_velocity_{};
  std::size_t sips_ = 0;
  std::vector<std::string> violations_;
};

}  // namespace flockbridge::testing
