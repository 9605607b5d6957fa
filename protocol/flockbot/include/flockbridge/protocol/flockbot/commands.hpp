// The table of commands a client may send to the Uno: their three-letter
// codes, the JSON names and arguments of port 2006, lengths and value ranges.
// One table drives the validation of binary payloads (port 2005) and the
// building of payloads from JSON, so the two can never disagree.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::protocol::flockbot {

enum class FieldType : std::uint8_t {
  U8,    ///< one unsigned byte
  I8,    ///< one signed byte, two's complement
  U16,   ///< two bytes, little-endian
  Text,  ///< printable ASCII, then a NUL byte; max = the most characters
};

struct FieldSpec {
  std::string_view name;  ///< the JSON argument name
  FieldType type;
  int min;
  int max;
};

inline constexpr std::size_t kMaxCommandFields = 3;

struct CommandSpec {
  std::string_view name;  ///< the JSON command name ("move")
  std::string_view code;  ///< the three payload letters ("DMS")
  std::array<FieldSpec, kMaxCommandFields> field_storage;
  std::size_t field_count;
  bool motion;     ///< makes the robot move (safety rules apply)
  bool json_form;  ///< the form a JSON command builds (one per name)

  [[nodiscard]] std::span<const FieldSpec> fields() const noexcept { return {field_storage.data(), field_count}; }
  /// Payload length: 3 code letters plus each field (text counted empty).
  [[nodiscard]] std::size_t fixed_length() const noexcept;
  [[nodiscard]] bool has_text() const noexcept;
};

/// Every command a client may send, in the order of the protocol tables.
[[nodiscard]] std::span<const CommandSpec> command_table() noexcept;

/// The JSON form of a command, by JSON name; nullptr when there is none.
[[nodiscard]] const CommandSpec* find_command(std::string_view name) noexcept;

/// The three letters of the emergency stop, which jumps every queue.
inline constexpr std::string_view kEmergencyCode = "EMG";
inline constexpr std::string_view kStopCode = "DST";

/// Checks a payload a client wants sent to the Uno against the table: known
/// code, exact length, every value in range, LCD text printable and
/// NUL-terminated. Returns the matching table entry or the reason for refusal.
[[nodiscard]] Result<const CommandSpec*> check_command(ByteView payload);

/// Builds the payload of `spec` from field values (in table order; a Text
/// field takes `text` and ignores its slot in `values`), checking every range.
[[nodiscard]] Result<Bytes> build_command(const CommandSpec& spec, std::span<const long long> values,
                                          std::string_view text = {});

/// Whether a checked payload sets the robot moving: a motion command with a
/// speed (or a wheel speed) that is not zero.
[[nodiscard]] bool sets_robot_moving(const CommandSpec& spec, ByteView payload) noexcept;

/// A command whose repetition moves the robot further: a move to distance
/// (DMD), a degree rotation (DRD), an arc (DRA). Sending one twice after the
/// Uno did it once moves the robot twice, so the link resends one only where
/// a NAK or a silence can only mean that the Uno did not get it.
[[nodiscard]] inline bool repeats_motion(ByteView payload) noexcept {
  if (payload.size() < 3 || payload[0] != 'D') return false;
  return (payload[1] == 'M' && payload[2] == 'D') || (payload[1] == 'R' && (payload[2] == 'D' || payload[2] == 'A'));
}

/// Stop or emergency stop: commands that must never be held back.
[[nodiscard]] bool is_stop(ByteView payload) noexcept;

[[nodiscard]] inline bool is_emergency(ByteView payload) noexcept {
  return payload.size() == 3 && payload[0] == 'E' && payload[1] == 'M' && payload[2] == 'G';
}

/// D M R: the Uno starts its odometers again at 0.
[[nodiscard]] inline bool is_odometer_reset(ByteView payload) noexcept {
  return payload.size() == 3 && payload[0] == 'D' && payload[1] == 'M' && payload[2] == 'R';
}

}  // namespace flockbridge::protocol::flockbot
