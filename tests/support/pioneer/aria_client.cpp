#include "support/pioneer/aria_client.hpp"

#include <thread>

namespace flockbridge::testing {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Command numbers from the robots' manuals (ARIA's ArCommands.h).
constexpr std::uint8_t kSync0 = 0;
constexpr std::uint8_t kSync1 = 1;
constexpr std::uint8_t kSync2 = 2;
constexpr std::uint8_t kPulse = 0;
constexpr std::uint8_t kOpen = 1;
constexpr std::uint8_t kClose = 2;
constexpr std::uint8_t kEnable = 4;
constexpr std::uint8_t kSetA = 5;
constexpr std::uint8_t kSetV = 6;
constexpr std::uint8_t kSetRV = 10;
constexpr std::uint8_t kVel = 11;
constexpr std::uint8_t kConfig = 18;
constexpr std::uint8_t kRVel = 21;
constexpr std::uint8_t kSetRA = 23;
constexpr std::uint8_t kConfigPacket = 0x20;

/// The checksum of the manuals: the big-endian 16-bit words of type and
/// payload summed, an odd last byte XORed in.
std::uint16_t checksum(const std::string& body) {
  unsigned sum = 0;
  std::size_t i = 0;
  for (; i + 1 < body.size(); i += 2) {
    sum += (static_cast<unsigned>(static_cast<unsigned char>(body[i])) << 8U) | static_cast<unsigned char>(body[i + 1]);
    sum &= 0xFFFF;
  }
  if (i < body.size()) sum ^= static_cast<unsigned char>(body[i]);
  return static_cast<std::uint16_t>(sum);
}

int i16(const std::string& payload, std::size_t at) {
  return static_cast<std::int16_t>(static_cast<unsigned char>(payload[at]) |
                                   (static_cast<unsigned char>(payload[at + 1]) << 8));
}

}  // namespace

AriaClient::AriaClient(std::uint16_t port, int max_segment) : socket_(port, 0, max_segment) {}

void AriaClient::send_packet(std::uint8_t type, const std::string& payload) {
  std::string body(1, static_cast<char>(type));
  body += payload;
  const std::uint16_t sum = checksum(body);
  std::string packet{'\xFA', '\xFB', static_cast<char>(body.size() + 2)};
  packet += body;
  packet.push_back(static_cast<char>(sum >> 8));
  packet.push_back(static_cast<char>(sum & 0xFF));
  socket_.send(packet);
  last_sent_ = Clock::now();
}

void AriaClient::command(std::uint8_t number) {
  send_packet(number, {});
}

void AriaClient::command(std::uint8_t number, int argument) {
  const int magnitude = argument < 0 ? -argument : argument;
  std::string payload{static_cast<char>(argument < 0 ? 0x1B : 0x3B), static_cast<char>(magnitude & 0xFF),
                      static_cast<char>((magnitude >> 8) & 0xFF)};
  send_packet(number, payload);
}

std::optional<AriaClient::Packet> AriaClient::read_packet(Clock::time_point deadline) {
  std::string& buffer = socket_.buffer();
  for (;;) {
    // Hunt for the header as ARIA's receiver does, byte by byte.
    while (buffer.size() >= 2 && !(buffer[0] == '\xFA' && buffer[1] == '\xFB')) {
      violations_.push_back("a byte outside any packet");
      buffer.erase(0, 1);
    }
    if (buffer.size() >= 3) {
      const std::size_t count = static_cast<unsigned char>(buffer[2]);
      if (count < 3 || count > 200) {
        violations_.push_back("a packet count of " + std::to_string(count));
        buffer.erase(0, 1);
        continue;
      }
      if (buffer.size() >= 3 + count) {
        const std::string body = buffer.substr(3, count - 2);
        const std::uint16_t sent = static_cast<std::uint16_t>((static_cast<unsigned char>(buffer[1 + count]) << 8) |
                                                              static_cast<unsigned char>(buffer[2 + count]));
        buffer.erase(0, 3 + count);
        if (sent != checksum(body)) {
          violations_.push_back("a packet with a bad checksum");
          continue;
        }
        return Packet{static_cast<std::uint8_t>(body[0]), body.substr(1)};
      }
    }
    if (!socket_.fill(deadline)) return std::nullopt;
  }
}

std::optional<AriaClient::Packet> AriaClient::await_type(std::uint8_t type, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (auto packet = read_packet(deadline)) {
    if (packet->type == type) return packet;
    // ARIA drops what it does not wait for during the handshake.
  }
  return std::nullopt;
}

std::optional<AriaClient::Identity> AriaClient::connect() {
  // SYNC0, SYNC1, SYNC2, each answered within 1 s, else from SYNC0 again;
  // ARIA gives up after about 6.4 s.
  const auto give_up = Clock::now() + 6400ms;
  std::optional<Packet> sync2;
  while (!sync2 && Clock::now() < give_up) {
    command(kSync0);
    if (!await_type(kSync0, 1s)) continue;
    command(kSync1);
    if (!await_type(kSync1, 1s)) continue;
    command(kSync2);
    sync2 = await_type(kSync2, 1s);
  }
  if (!sync2) return std::nullopt;
  Identity identity;
  std::vector<std::string> fields;
  std::string field;
  for (const char c : sync2->payload) {
    if (c == '\0') {
      fields.push_back(field);
      field.clear();
    } else {
      field.push_back(c);
    }
  }
  if (fields.size() < 3) {
    violations_.push_back("a SYNC2 answer without name, class and subclass");
    return std::nullopt;
  }
  identity = Identity{fields[0], fields[1], fields[2]};

  command(kOpen, 1);
  command(kConfig, 1);
  // Up to 1 s for the configuration packet; SIPs may come first.
  const auto config_deadline = Clock::now() + 1s;
  while (!config_) {
    auto packet = read_packet(config_deadline);
    if (!packet) break;
    if (packet->type == kConfigPacket) {
      config_ = packet;
    } else if (packet->type == 0x32 || packet->type == 0x33) {
      ++sips_;
    } else {
      violations_.push_back("packet of type " + std::to_string(packet->type) + " while waiting for the config");
    }
  }
  // The limits from the robot's parameter file, then the motors.
  command(kSetV, 750);
  command(kSetA, 300);
  command(kSetRV, 100);
  command(kSetRA, 100);
  command(kPulse);
  command(kEnable, 1);
  connected_ = true;
  return identity;
}

void AriaClient::set_velocity(int mm_s, int deg_s) {
  velocity_ = std::pair{mm_s, deg_s};
  command(kVel, mm_s);
  command(kRVel, deg_s);
  last_velocity_ = Clock::now();
}

std::vector<AriaClient::Packet> AriaClient::run_for(std::chrono::milliseconds duration) {
  std::vector<Packet> read;
  const auto end = Clock::now() + duration;
  while (Clock::now() < end) {
    const auto now = Clock::now();
    if (velocity_ && now - last_velocity_ >= 500ms) set_velocity(velocity_->first, velocity_->second);
    if (now - last_sent_ >= 500ms) command(kPulse);
    // Wake at least every 100 ms, as ARIA's cycle does.
    auto packet = read_packet(std::min(end, Clock::now() + 100ms));
    if (!packet) {
      if (socket_.eof()) break;
      continue;
    }
    if (packet->type == 0x32 || packet->type == 0x33) {
      ++sips_;
      read.push_back(*packet);
    } else if (packet->type != kConfigPacket) {
      violations_.push_back("packet of type " + std::to_string(packet->type) + " while running");
    }
  }
  return read;
}

std::vector<AriaClient::Packet> AriaClient::listen_for(std::chrono::milliseconds duration) {
  std::vector<Packet> read;
  const auto end = Clock::now() + duration;
  while (auto packet = read_packet(end)) {
    if (packet->type == 0x32 || packet->type == 0x33) {
      ++sips_;
      read.push_back(*packet);
    }
  }
  return read;
}

void AriaClient::disconnect() {
  command(kEnable, 0);
  std::this_thread::sleep_for(100ms);  // ARIA's own pause between the two; nothing to await
  command(kClose);
  velocity_.reset();
  connected_ = false;
}

void AriaClient::kill() {
  TcpClient gone = std::move(socket_);
}

int AriaClient::x(const Packet& sip) {
  return i16(sip.payload, 0) & 0x7FFF;
}

int AriaClient::left_velocity(const Packet& sip) {
  return i16(sip.payload, 6);
}

int AriaClient::right_velocity(const Packet& sip) {
  return i16(sip.payload, 8);
}

}  // namespace flockbridge::testing
