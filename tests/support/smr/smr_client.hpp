// A client of port 24901 that behaves as a program built on the SMR client
// library does (smr.c, seed 001, smr.md):
// - connect: TCP with TCP_NODELAY; nothing is sent until the first read;
// - read: sends READY (E1 02), skips everything up to a period's START,
//   takes its tick and timestamp (little-endian), then reads messages until
//   it has both encoders, the IR and the line sensor, or the period's END;
//   the right encoder and pwm are negated (reverse_right);
// - write: `02 11 L 02 12 R'` in one write, R' the right speed negated and
//   -128 sent as -127;
// - disconnect: read, read, zero speeds, read, close.
//
// It decodes every byte from the framing itself, from smr.h's definitions,
// so that a mistake in the bridge's codec cannot hide in it, and it is
// strict: a message of a type the library does not know (2, 4, 5, 6), or a
// control message other than START and END, is recorded as a violation,
// which the tests check is none. Every read has a deadline, so that a test
// fails instead of hanging where the original would block.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/tcp_client.hpp"

namespace flockbridge::testing {

class SmrClient {
 public:
  /// What struct smr holds after a read.
  struct State {
    std::uint32_t tick = 0;
    std::uint32_t ts = 0;
    std::uint16_t left_encoder = 0;
    std::uint16_t right_encoder = 0;  ///< negated, as the library shows it
    int left_pwm = 0;
    int right_pwm = 0;
    int left_status = 0;
    int right_status = 0;
    std::array<std::uint8_t, 6> ir{};
    std::array<std::uint8_t, 8> ls{};
    int status = 0;  ///< the power module's digital inputs
    std::array<int, 5> ad{};
    bool ended_early = false;  ///< the period's END came before all four
    /// When the kernel received the START (dated by the receive that
    /// brought its last bytes: never earlier than it came).
    std::chrono::system_clock::time_point start_received{};
    /// When this read sent its READY: SMRD owes the program the first
    /// period that begins after the READY came.
    std::chrono::system_clock::time_point ready_sent{};
  };

  explicit SmrClient(std::uint16_t port);

  /// smr_read: a whole period, or nothing when the deadline passes first.
  std::optional<State> read(std::chrono::milliseconds timeout = std::chrono::seconds(2));
  /// smr_write.
  void write(int left_speed, int right_speed);
  /// smr_disconnect; false when one of its reads timed out.
  bool disconnect();

  /// Bytes as they are, for tests that misbehave on purpose.
  void send_raw(const std::vector<std::uint8_t>& bytes) { tcp_.send(bytes); }
  [[nodiscard]] TcpClient& tcp() noexcept { return tcp_; }
  [[nodiscard]] const std::vector<std::string>& violations() const noexcept { return violations_; }
  /// Messages skipped before a START, over every read.
  [[nodiscard]] std::uint64_t skipped() const noexcept { return skipped_; }
  /// Bus messages that were neither of the four awaited nor the power's
  /// (echoed client messages, empty messages).
  [[nodiscard]] std::uint64_t other_bus() const noexcept { return other_bus_; }
  /// Those of the last read, whole, in order (the period's echoed client messages first).
  [[nodiscard]] const std::vector<std::string>& last_other() const noexcept { return last_other_; }

 private:
  /// enet_read: the next whole message (first byte included).
  std::optional<std::string> next(std::chrono::steady_clock::time_point deadline);
  /// Reads more into the buffer, noting when the kernel received it; false on timeout or EOF.
  bool fill(std::chrono::steady_clock::time_point deadline);

  TcpClient tcp_;
  std::vector<std::string> violations_;
  std::uint64_t skipped_ = 0;
  std::uint64_t other_bus_ = 0;
  std::vector<std::string> last_other_;
  State state_;
  std::chrono::system_clock::time_point last_arrival_;  ///< of the bytes read last
  std::vector<char> chunk_ = std::vector<char>(65536);  ///< one read's room
};

}  // namespace flockbridge::testing
