// The SMR's RS485 bus as SMRD drives it (smrd.c, seed 000, struct smr of
// seed 001), and the robot's state decoded from a period's module replies.
//
// Conditions of the problem:
// - each 10 ms period the master asks every module in turn, each request
//   followed by zero bytes that leave the module time to answer: `01 21`
//   (left motor, which answers A1) + 10, `01 22` (right motor, A2) + 10,
//   `01 17` (line sensor) + 16, `01 88` (IR) + 16, `01 19` (power) + 16;
//   then at most one client message; then zeros up to 104 bytes, about a
//   period's worth at 115200 baud. (smrd.c's comments call module 0x21 the
//   right encoder; smr.h and the client library read A1 as the left one.)
// - client motor commands go first in the period: `02 11 speed` to the
//   left motor, `02 12 speed` to the right; one of each a period;
// - a zero byte read back is an empty bus message (N = 0), which clients
//   get too and skip;
// - module replies (N counts the bytes after the first):
//     A1/A2 motor:   03 Ax enc_hi enc_lo             (older modules)
//                    05 Ax enc_hi enc_lo status pwm  (pwm offset by 128)
//     17 line:       N >= 8, 8 (up to 31) bytes of sensor data
//     88 IR:         N >= 6, the first 6 bytes are the distances
//     19 power:      N = 8: fedcbaAA BBCCDDEE then the low 8 bits of the
//                    analog inputs A..E (10 bits each, the two high bits
//                    from the first two bytes); digital input a is the
//                    power switch
// - the client library shows the right motor mirrored (struct smr's
//   reverse_right): its encoder and pwm negated, and the speed it writes
//   negated on the wire.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/smr/messages.hpp"

namespace flockbridge::protocol::smr {

/// Module addresses as requests and commands name them.
namespace module {
inline constexpr Byte kLeftSpeed = 0x11;
inline constexpr Byte kRightSpeed = 0x12;
inline constexpr Byte kLeftMotor = 0x21;
inline constexpr Byte kRightMotor = 0x22;
inline constexpr Byte kLineSensor = 0x17;
inline constexpr Byte kInfrared = 0x88;
inline constexpr Byte kPower = 0x19;
}  // namespace module

/// What the modules answer with (the first body byte of a reply).
namespace reply {
inline constexpr Byte kLeftEncoder = 0xA1;
inline constexpr Byte kRightEncoder = 0xA2;
inline constexpr Byte kLineSensor = 0x17;
inline constexpr Byte kInfrared = 0x88;
inline constexpr Byte kPower = 0x19;
}  // namespace reply

/// One poll of the period: the request's module and the zeros after it.
struct Poll {
  Byte module;
  std::size_t padding;
};
inline constexpr std::array<Poll, 5> kPolls{{{module::kLeftMotor, 10},
                                             {module::kRightMotor, 10},
                                             {module::kLineSensor, 16},
                                             {module::kInfrared, 16},
                                             {module::kPower, 16}}};
/// The bytes the master writes in a period, zeros included.
inline constexpr std::size_t kPeriodBytes = 104;

/// The period's requests, each with its zeros, in order (78 bytes).
[[nodiscard]] Bytes encode_polls();

/// A motor speed command as the client library writes it: `02 11 speed`
/// (left) or `02 12 speed` (right), -127..127 (-128 is sent as -127).
[[nodiscard]] Bytes encode_speed(Byte speed_module, int speed);

/// A speed command in a bus message's body: which motor, and the speed.
struct SpeedCommand {
  Byte module = 0;  ///< module::kLeftSpeed or kRightSpeed
  std::int8_t speed = 0;

  friend bool operator==(const SpeedCommand&, const SpeedCommand&) = default;
};
[[nodiscard]] std::optional<SpeedCommand> read_speed(ByteView body) noexcept;
/// The speed commands in whole client messages (SMRD's framing), in order;
/// other messages skipped.
[[nodiscard]] std::vector<SpeedCommand> speed_commands(ByteView messages);

inline constexpr std::size_t kIrCount = 6;
inline constexpr std::size_t kLineCount = 8;
inline constexpr std::size_t kAnalogCount = 5;

/// Status flags of a motor module.
namespace motor_status {
inline constexpr int kEncoderTooFast = 1;
inline constexpr int kBlocked = 2;
inline constexpr int kNoEncoder = 4;
}  // namespace motor_status

/// Digital inputs of the power module (struct smr's status).
namespace power_status {
inline constexpr int kPowerOn = 1;
inline constexpr int kExternalPower = 2;  ///< power module 3.3b
inline constexpr int kCharging = 4;       ///< power module 3.3b
}  // namespace power_status

struct MotorState {
  std::uint16_t encoder = 0;  ///< as the module counts: 2000 positions a wheel turn
  std::optional<int> status;  ///< motor_status flags; modules that send 3 bytes have none
  std::optional<int> pwm;     ///< the motor's drive, -128..127

  friend bool operator==(const MotorState&, const MotorState&) = default;
};

/// Which parts of a Reading a period filled in.
namespace part {
inline constexpr unsigned kLeft = 1;
inline constexpr unsigned kRight = 2;
inline constexpr unsigned kInfrared = 4;
inline constexpr unsigned kLine = 8;
inline constexpr unsigned kPower = 16;
}  // namespace part

/// The robot as a period's replies show it, the module's own values (the
/// right motor not mirrored: that is the client library's view).
struct Reading {
  MotorState left;
  MotorState right;
  std::array<std::uint8_t, kIrCount> ir{};
  std::array<std::uint8_t, kLineCount> line{};
  std::array<int, kAnalogCount> analog{};  ///< 10-bit power module inputs
  int digital = 0;                         ///< power_status flags
  unsigned parts = 0;                      ///< part:: flags of what this period brought

  friend bool operator==(const Reading&, const Reading&) = default;
};

/// Reads a bus message (a module's reply) into `reading`; returns the part
/// it filled in, 0 when it was not a reply the reading has a place for (an
/// empty message, a client's command echoed, a reply too short).
unsigned apply_reply(ByteView body, Reading& reading) noexcept;

/// A period's reading with the parts it lacks (a module whose reply missed
/// the period) filled in from the module's last answer, while that answer
/// is at most `hold_periods` periods old: a reply that came late once does
/// not take a field from a program, as it did not from struct smr; a module
/// silent longer (the link then reports it) gives none, so that no program
/// reads an old distance for a new one.
class ReadingHold {
 public:
  explicit ReadingHold(unsigned hold_periods) noexcept : hold_periods_(hold_periods) {}
  /// `fresh`, its parts flags saying what it holds now, fresh or held.
  [[nodiscard]] Reading fill(const Reading& fresh) noexcept;
  void reset() noexcept;
  void set_hold_periods(unsigned hold_periods) noexcept { hold_periods_ = hold_periods; }

 private:
  unsigned hold_periods_;
  Reading last_;                   ///< each part's last answer (last_.parts: answered at all)
  std::array<unsigned, 5> age_{};  ///< periods since each part's answer, by its bit
};

/// The power module's analog reading in volts (battery, external supply):
/// 4.1 * 3.5 / 1.1 / 1024 per count.
[[nodiscard]] double analog_volts(int counts) noexcept;

/// The power module's reply, the whole message (`08 19 ...`): digital
/// inputs (power_status flags, 6 bits) and 10-bit analog inputs.
[[nodiscard]] Bytes encode_power(int digital, const std::array<int, kAnalogCount>& analog);
/// A motor module's reply, the whole message (`05 Ax enc_hi enc_lo status
/// pwm+128`), for `reply_code` reply::kLeftEncoder or kRightEncoder.
[[nodiscard]] Bytes encode_motor(Byte reply_code, std::uint16_t encoder, int status, int pwm);

}  // namespace flockbridge::protocol::smr
