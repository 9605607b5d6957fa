#include "support/flockbot/legacy_client.hpp"

#include <cstring>

namespace flockbridge::testing {
namespace {

std::string le16(std::uint16_t value) {
  return {static_cast<char>(value & 0xFF), static_cast<char>(value >> 8)};
}

std::string hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (!out.empty()) out += ' ';
    out += kDigits[b >> 4];
    out += kDigits[b & 0xF];
  }
  return out;
}

}  // namespace

std::optional<LegacyClient::Message> LegacyClient::test_connection(std::chrono::milliseconds timeout) {
  socket_.send("hello");
  return read(timeout);
}

void LegacyClient::register_sensors(std::int32_t rate) {
  std::string message = "\x06SS";
  char value[4];
  std::memcpy(value, &rate, sizeof(value));  // '<b2si': little-endian, as on every machine it ran on
  message.append(value, sizeof(value));
  socket_.send(message);
}

void LegacyClient::stop_sensor() {
  socket_.send(std::string("\x06SF\0\0\0\0", 7));
}

void LegacyClient::move_speed(std::int8_t speed) {
  retransmit("DMS" + std::string(1, static_cast<char>(speed)));
}

void LegacyClient::move_distance(std::int8_t speed, std::uint16_t dist) {
  retransmit("DMD" + std::string(1, static_cast<char>(speed)) + le16(dist));
}

void LegacyClient::move_wheels(std::int8_t left, std::int8_t right) {
  retransmit("DMW" + std::string(1, static_cast<char>(left)) + std::string(1, static_cast<char>(right)));
}

void LegacyClient::rotate(std::int8_t speed, std::int16_t deg) {
  retransmit("DRD" + std::string(1, static_cast<char>(speed)) + le16(static_cast<std::uint16_t>(deg)));
}

void LegacyClient::stop() {
  socket_.send("\x02ST");
}

void LegacyClient::retransmit(const std::string& payload) {
  std::string message;
  message += static_cast<char>(2 + 1 + payload.size());
  message += "RT";
  message += static_cast<char>(payload.size());
  message += payload;
  socket_.send(message);
}

std::optional<LegacyClient::Message> LegacyClient::parse_buffered() {
  std::string& buffer = socket_.buffer();
  if (buffer.empty()) return std::nullopt;
  const auto length = static_cast<std::int8_t>(buffer[0]);  // struct.unpack('b', ...)
  if (length <= 0) {
    death_ = "length byte " + std::to_string(length) + " (" + hex(buffer.substr(0, 1)) + ")";
    return std::nullopt;
  }
  const auto size = static_cast<std::size_t>(static_cast<std::uint8_t>(length));  // 1..127 here
  if (buffer.size() < 1 + size) return std::nullopt;
  const std::string body = buffer.substr(1, size);
  buffer.erase(0, 1 + size);
  const std::string code = body.substr(0, 2);
  const std::size_t expected = code == "SP" ? 28 : (code == "AC" || code == "DM") ? 3 : 0;
  if (expected == 0) {
    death_ = "no parser for code '" + code + "': " + hex(body);
  } else if (body.size() != expected) {
    death_ = "'" + code + "' does not unpack from " + std::to_string(body.size()) + " bytes: " + hex(body);
  }
  if (dead()) return std::nullopt;
  ++counts_[code];
  return Message{code, body};
}

std::optional<LegacyClient::Message> LegacyClient::read(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!dead()) {
    if (auto message = parse_buffered()) return message;
    if (dead() || !socket_.fill(deadline)) return std::nullopt;
  }
  return std::nullopt;
}

std::optional<LegacyClient::Message> LegacyClient::read_code(const std::string& code,
                                                             std::chrono::milliseconds timeout) {
  return read_until(
      timeout, [this](std::chrono::milliseconds left) { return read(left); },
      [&](const Message& message) { return message.code == code; });
}

std::size_t LegacyClient::drain() {
  std::size_t count = 0;
  socket_.drain_available();
  while (parse_buffered()) ++count;
  return count;
}

}  // namespace flockbridge::testing
