#include "support/smr/smr_client.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cstring>

namespace flockbridge::testing {
namespace {

// smr.h: the message types and SMRD's control subcommands.
constexpr int kType485 = 0;
constexpr int kType232 = 1;
constexpr int kTypeSim = 3;
constexpr int kTypeControl = 7;
constexpr int kControlStart = 0;
constexpr int kControlEnd = 1;
constexpr std::uint8_t kLeftEncoder = 0xA1;
constexpr std::uint8_t kRightEncoder = 0xA2;
constexpr std::uint8_t kLineSensor = 0x17;
constexpr std::uint8_t kInfrared = 0x88;
constexpr std::uint8_t kPower = 0x19;

std::uint8_t at(const std::string& message, std::size_t i) {
  return static_cast<std::uint8_t>(message[i]);
}

std::string hex_of(const std::string& message) {
  static const char* digits = "0123456789abcdef";
  std::string text;
  for (const char c : message) {
    const auto b = static_cast<std::uint8_t>(c);
    if (!text.empty()) text += ' ';
    text += digits[b >> 4];
    text += digits[b & 15];
  }
  return text;
}

}  // namespace

SmrClient::SmrClient(std::uint16_t port) : tcp_(port) {
  int one = 1;
  ::setsockopt(tcp_.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::setsockopt(tcp_.fd(), SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
}

bool SmrClient::fill(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  pollfd readable{tcp_.fd(), POLLIN, 0};
  if (::poll(&readable, 1, static_cast<int>(std::max<long>(left.count(), 0))) != 1) return false;
  const auto received = receive_timestamped(tcp_.fd(), chunk_, std::chrono::system_clock::now());
  if (!received) return false;
  last_arrival_ = received->at;
  tcp_.buffer().append(chunk_.data(), received->bytes);
  return true;
}

std::optional<std::string> SmrClient::next(std::chrono::steady_clock::time_point deadline) {
  std::string& buffer = tcp_.buffer();
  while (buffer.empty()) {
    if (!fill(deadline)) return std::nullopt;
  }
  const std::size_t length = (at(buffer, 0) & 0x1F) + 1U;
  while (buffer.size() < length) {
    if (!fill(deadline)) return std::nullopt;
  }
  std::string message = buffer.substr(0, length);
  buffer.erase(0, length);
  const int type = at(message, 0) >> 5;
  if (type != kType485 && type != kType232 && type != kTypeSim && type != kTypeControl) {
    violations_.push_back("a message of unknown type " + std::to_string(type) + ": " + hex_of(message));
  } else if (type == kTypeControl &&
             (message.size() < 2 || (at(message, 1) != kControlStart && at(message, 1) != kControlEnd))) {
    violations_.push_back("a control message the library does not know: " + hex_of(message));
  } else if (type == kTypeControl && at(message, 1) == kControlStart && message.size() != 10) {
    violations_.push_back("a START that is not 10 bytes: " + hex_of(message));
  }
  return message;
}

std::optional<SmrClient::State> SmrClient::read(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  state_.ready_sent = std::chrono::system_clock::now();
  tcp_.send(std::vector<std::uint8_t>{0xE1, 0x02});
  std::optional<std::string> message;
  for (;;) {  // flush out the old messages, up to a START
    message = next(deadline);
    if (!message) return std::nullopt;
    if (at(*message, 0) >> 5 == kTypeControl && message->size() > 1 && at(*message, 1) == kControlStart) break;
    ++skipped_;
  }
  State& s = state_;
  s.start_received = last_arrival_;
  if (message->size() >= 10) {
    std::memcpy(&s.tick, message->data() + 2, 4);  // SMRD writes them in the x86's order
    std::memcpy(&s.ts, message->data() + 6, 4);
  }
  s.ended_early = false;
  last_other_.clear();
  enum : unsigned { kLE = 1, kRE = 2, kIR = 4, kLS = 8 };
  unsigned flags = 0;
  while ((flags & (kLE | kRE | kIR | kLS)) != (kLE | kRE | kIR | kLS)) {
    message = next(deadline);
    if (!message) return std::nullopt;
    const std::string& m = *message;
    const int type = at(m, 0) >> 5;
    const std::size_t bytes = m.size();
    if (type == kTypeControl && bytes > 1 && at(m, 1) == kControlEnd) {
      s.ended_early = true;
      return s;
    }
    if (type != kType485 || bytes < 2) {
      ++other_bus_;
      last_other_.push_back(m);
      continue;
    }
    switch (at(m, 1)) {
      case kLeftEncoder:
      case kRightEncoder: {
        const bool left = at(m, 1) == kLeftEncoder;
        auto encoder = static_cast<std::uint16_t>((at(m, 2) << 8) + at(m, 3));
        if (!left) encoder = static_cast<std::uint16_t>(-encoder);
        (left ? s.left_encoder : s.right_encoder) = encoder;
        if (bytes >= 6) {
          (left ? s.left_status : s.right_status) = at(m, 4);
          const int pwm = at(m, 5) - 128;
          (left ? s.left_pwm : s.right_pwm) = left ? pwm : -pwm;
        }
        flags |= left ? kLE : kRE;
        break;
      }
      case kLineSensor:
        if (bytes >= 9) {
          for (std::size_t i = 0; i < s.ls.size(); ++i) s.ls[i] = at(m, 2 + i);
          flags |= kLS;
        }
        break;
      case kInfrared:
        if (bytes >= 7) {
          for (std::size_t i = 0; i < s.ir.size(); ++i) s.ir[i] = at(m, 2 + i);
          flags |= kIR;
        }
        break;
      case kPower:
        if (bytes == 9) {
          s.status = at(m, 2) >> 2;
          s.ad[0] = ((at(m, 2) << 8) & 0x300) | at(m, 4);
          s.ad[1] = ((at(m, 3) << 2) & 0x300) | at(m, 5);
          s.ad[2] = ((at(m, 3) << 4) & 0x300) | at(m, 6);
          s.ad[3] = ((at(m, 3) << 6) & 0x300) | at(m, 7);
          s.ad[4] = ((at(m, 3) << 8) & 0x300) | at(m, 8);
        }
        break;
      default:
        ++other_bus_;
        last_other_.push_back(m);
        break;
    }
  }
  return s;
}

void SmrClient::write(int left_speed, int right_speed) {
  const int left = left_speed == -128 ? -127 : left_speed;
  const int right = right_speed == -128 ? -127 : right_speed;
  tcp_.send(std::vector<std::uint8_t>{0x02, 0x11, static_cast<std::uint8_t>(static_cast<std::int8_t>(left)), 0x02, 0x12,
                                      static_cast<std::uint8_t>(static_cast<std::int8_t>(-right))});
}

bool SmrClient::disconnect() {
  bool ok = read().has_value();
  ok = read().has_value() && ok;
  write(0, 0);
  ok = read().has_value() && ok;
  ::shutdown(tcp_.fd(), SHUT_RDWR);
  return ok;
}

}  // namespace flockbridge::testing
