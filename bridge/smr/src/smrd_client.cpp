#include "flockbridge/bridge/smr/smrd_client.hpp"

#include <algorithm>
#include <string>

namespace flockbridge::bridge::smr {
namespace {

namespace bus = protocol::smr;

constexpr int kMostBanked = 2;  ///< SMRD's cap on a client's READYs
constexpr auto kControl = static_cast<std::uint8_t>(bus::MessageType::Control);

/// The first two bytes of SMRD's END and START.
constexpr unsigned char kEnd[] = {0xE1, bus::control::kEnd};
constexpr unsigned char kStartFirst = 0xE9;

bool starts_with(std::string_view message, unsigned char first, unsigned char second) {
  return message.size() >= 2 && static_cast<unsigned char>(message[0]) == first &&
         static_cast<unsigned char>(message[1]) == second;
}

}  // namespace

bool PeriodSoFar::is_end(std::string_view message) noexcept {
  return message.size() == 2 && starts_with(message, kEnd[0], kEnd[1]);
}

void PeriodSoFar::follow(std::string_view message) {
  if (is_end(message)) {
    bytes_.clear();
  } else if (starts_with(message, kStartFirst, bus::control::kStart)) {
    bytes_.assign(message);
  } else if (!bytes_.empty()) {
    bytes_.append(message);
  }
}

void SmrdClient::feed(protocol::ByteView bytes, SteadyTime now) {
  if (unreadable_) return;
  last_bytes_ = now;
  decoder_.feed(bytes);
  while (auto message = decoder_.next()) {
    if (!bus::is_known_type(message->type)) {
      disconnect("a message of type " + std::to_string(message->type) + " (" +
                 bus::describe(message->type, message->body) + ")");
      return;
    }
    if (message->type != kControl) {
      const protocol::Bytes whole = bus::encode_message(static_cast<bus::MessageType>(message->type), message->body);
      command_.insert(command_.end(), whole.begin(), whole.end());
      continue;
    }
    flush_command();
    if (message->body.size() == 1 && message->body[0] == bus::control::kReady) {
      if (ready_ == 0 && !period_.bytes().empty()) {
        inputs_.emplace_back(native_input::Reply{make_buffer(period_.bytes())});
      }
      ready_ = std::min(ready_ + 1, kMostBanked);
      continue;
    }
    inputs_.emplace_back(
        protocol::Error{"SMRD control message " + bus::describe(message->type, message->body) + " ignored"});
  }
  flush_command();
  // A message of no known type is given up at its first byte, not when
  // (perhaps never) its last arrives.
  if (const auto type = decoder_.pending_type(); type && !bus::is_known_type(*type)) {
    disconnect("a message of type " + std::to_string(*type) + " begun");
  }
}

void SmrdClient::disconnect(const std::string& what) {
  flush_command();
  unreadable_ = true;
  inputs_.emplace_back(native_input::Disconnect{"not SMRD's protocol: " + what + ", after which nothing can be read"});
}

void SmrdClient::flush_command() {
  if (command_.empty()) return;
  inputs_.emplace_back(protocol::ClientRequest{protocol::SendCommand{std::move(command_)}});
  command_.clear();
}

std::optional<NativeInput> SmrdClient::next() {
  if (inputs_.empty()) return std::nullopt;
  NativeInput input = std::move(inputs_.front());
  inputs_.pop_front();
  return input;
}

std::size_t SmrdClient::expire(SteadyTime now, std::chrono::milliseconds timeout) {
  if (!decoder_.in_message() || now - last_bytes_ < timeout) return 0;
  const std::size_t dropped = decoder_.pending_bytes();
  decoder_.abandon();
  return dropped;
}

bool SmrdClient::admit(std::string_view message, MessageOrigin origin) {
  if (origin != MessageOrigin::Robot || message.empty()) return false;
  period_.follow(message);
  if (PeriodSoFar::is_end(message)) {
    if (ready_ == 0) return false;
    --ready_;
    return true;
  }
  return ready_ > 0;
}

}  // namespace flockbridge::bridge::smr
