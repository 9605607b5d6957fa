// Byte vocabulary shared by every codec: owned and borrowed byte strings,
// little-endian access, a printable rendering for error messages, and the
// Result type that every fallible function returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace flockbridge::protocol {

using Byte = std::uint8_t;
using Bytes = std::vector<Byte>;
using ByteView = std::span<const Byte>;

/// Why something was refused or failed, for programs (the message is for people).
enum class ErrorCode : std::uint8_t {
  Invalid,      ///< malformed, unknown, or out of range
  LinkDown,     ///< the robot link is not up
  QueueFull,    ///< too many commands waiting for the serial line
  RateLimited,  ///< the client sends commands faster than allowed
  Refused,      ///< the robot answered NAK to every try
  NoAck,        ///< the robot did not acknowledge any try
  LinkLost,     ///< the link went down (or the robot rebooted) while the command waited
  Cancelled,    ///< an emergency stop cancelled it
  Busy,         ///< another client holds control of the robot
  Denied,       ///< the connection may not do this (its role), or a wrong or too early secret
  Latched,      ///< an emergency stop is latched: no motion until it is cleared
  Replay,       ///< the bridge replays a recording: there is no robot to command
};
inline constexpr std::size_t kErrorCodeCount = 12;

/// "invalid", "link_down", "queue_full", "rate_limited", "refused", "no_ack",
/// "link_lost", "cancelled", "busy", "denied", "latched", "replay": the names clients see.
[[nodiscard]] std::string_view error_code_name(ErrorCode code) noexcept;

/// A refusal with a sentence a student can act on.
struct Error {
  std::string message;
  ErrorCode code = ErrorCode::Invalid;
  /// The same in fewer words, for dialects that bound a message's length
  /// (a native dialect's short error message); empty when `message` says it briefly
  /// enough, or may be ended at a word.
  std::string brief{};
};

/// Either a value or an Error. Callers cannot ignore it.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const noexcept { return std::holds_alternative<T>(state_); }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] T& value() & { return std::get<T>(state_); }
  [[nodiscard]] const T& value() const& { return std::get<T>(state_); }
  [[nodiscard]] T&& value() && { return std::get<T>(std::move(state_)); }
  [[nodiscard]] const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

/// The value of a Result that carries nothing but success.
struct Done {};

/// Views a string's characters as bytes (for literals in tests and tables).
[[nodiscard]] inline ByteView as_bytes(std::string_view text) noexcept {
  return {reinterpret_cast<const Byte*>(text.data()), text.size()};
}

[[nodiscard]] inline std::uint16_t read_u16le(ByteView bytes, std::size_t at) noexcept {
  return static_cast<std::uint16_t>(bytes[at] | (bytes[at + 1] << 8));
}
[[nodiscard]] inline std::int16_t read_i16le(ByteView bytes, std::size_t at) noexcept {
  return static_cast<std::int16_t>(read_u16le(bytes, at));
}
inline void append_u16le(Bytes& out, std::uint16_t value) {
  out.push_back(static_cast<Byte>(value & 0xFF));
  out.push_back(static_cast<Byte>(value >> 8));
}
inline void append_u32le(Bytes& out, std::uint32_t value) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<Byte>(value >> shift));
}

/// "44 4D 53 0A": bytes as upper-case hex pairs separated by spaces.
[[nodiscard]] std::string to_hex(ByteView bytes);
/// The bytes of to_hex's text (either case, pairs with or without spaces
/// between them); nothing for any other text.
[[nodiscard]] std::optional<Bytes> from_hex(std::string_view text);

/// A packet tag for messages: "DMS" when the bytes are printable ASCII,
/// otherwise their hex form.
[[nodiscard]] std::string describe_tag(ByteView bytes);

[[nodiscard]] constexpr bool is_ascii_letter(Byte b) noexcept {
  return (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z');
}
[[nodiscard]] constexpr bool is_printable_ascii(Byte b) noexcept {
  return b >= 0x20 && b <= 0x7E;
}

}  // namespace flockbridge::protocol
