// MCAP's serialization (little-endian integers, u32-length strings, maps
// and arrays), both ways, for the writer and the reader.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/mcap/mcap.hpp"

namespace flockbridge::protocol::mcap {

template <typename T>
void put_le(Bytes& out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<Byte>(value >> (8 * i)));
}
inline void put_u16(Bytes& out, std::uint16_t value) {
  put_le(out, value);
}
inline void put_u32(Bytes& out, std::uint32_t value) {
  put_le(out, value);
}
inline void put_u64(Bytes& out, std::uint64_t value) {
  put_le(out, value);
}
inline void put_string(Bytes& out, std::string_view text) {
  put_u32(out, static_cast<std::uint32_t>(text.size()));
  out.insert(out.end(), text.begin(), text.end());
}
inline void put_string_map(Bytes& out, const StringMap& map) {
  std::uint32_t length = 0;
  for (const auto& [key, value] : map) length += static_cast<std::uint32_t>(8 + key.size() + value.size());
  put_u32(out, length);
  for (const auto& [key, value] : map) {
    put_string(out, key);
    put_string(out, value);
  }
}

/// Writes a record's opcode and, when it goes out of scope, its length in
/// front of the fields written meanwhile.
class Record {
 public:
  Record(Bytes& out, Opcode opcode) : out_(out), at_(out.size()) {
    out.push_back(static_cast<Byte>(opcode));
    put_u64(out, 0);
  }
  Record(const Record&) = delete;
  Record& operator=(const Record&) = delete;
  ~Record() {
    const std::uint64_t length = out_.size() - at_ - kRecordPrefix;
    for (std::size_t i = 0; i < 8; ++i) out_[at_ + 1 + i] = static_cast<Byte>(length >> (8 * i));
  }

 private:
  Bytes& out_;
  std::size_t at_;
};

/// Reads a record's fields in order; a field that runs past the end fails
/// the cursor, and every later read gives nothing.
class Cursor {
 public:
  explicit Cursor(ByteView bytes) noexcept : bytes_(bytes) {}

  template <typename T>
  std::optional<T> le() noexcept {
    if (!ok_ || bytes_.size() - at_ < sizeof(T)) return fail<T>();
    T value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      value = static_cast<T>(value | (static_cast<T>(bytes_[at_ + i]) << (8 * i)));
    at_ += sizeof(T);
    return value;
  }
  std::optional<ByteView> bytes(std::uint64_t count) noexcept {
    if (!ok_ || bytes_.size() - at_ < count) return fail<ByteView>();
    const ByteView out = bytes_.subspan(at_, static_cast<std::size_t>(count));
    at_ += static_cast<std::size_t>(count);
    return out;
  }
  std::optional<std::string> string() {
    const auto length = le<std::uint32_t>();
    if (!length) return std::nullopt;
    const auto text = bytes(*length);
    if (!text) return std::nullopt;
    return std::string(text->begin(), text->end());
  }
  std::optional<StringMap> string_map() {
    const auto length = le<std::uint32_t>();
    if (!length) return std::nullopt;
    const auto entries = bytes(*length);
    if (!entries) return std::nullopt;
    Cursor inner(*entries);
    StringMap map;
    while (!inner.at_end()) {
      auto key = inner.string();
      auto value = inner.string();
      if (!key || !value) return fail<StringMap>();
      map[std::move(*key)] = std::move(*value);
    }
    return map;
  }
  /// What is left of the fields.
  [[nodiscard]] ByteView rest() const noexcept { return bytes_.subspan(at_); }
  [[nodiscard]] bool at_end() const noexcept { return at_ == bytes_.size(); }
  [[nodiscard]] bool ok() const noexcept { return ok_; }

 private:
  template <typename T>
  std::optional<T> fail() noexcept {
    ok_ = false;
    return std::nullopt;
  }

  ByteView bytes_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

}  // namespace flockbridge::protocol::mcap
