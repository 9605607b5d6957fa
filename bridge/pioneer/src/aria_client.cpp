#include "flockbridge/bridge/pioneer/aria_client.hpp"

#include <algorithm>
#include <string>

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/protocol/pioneer/commands.hpp"

namespace flockbridge::bridge::pioneer {
namespace {

namespace codec = protocol::pioneer;

constexpr int kSynced = 3;

}  // namespace

void AriaClient::feed(protocol::ByteView bytes, SteadyTime now) {
  last_bytes_ = now;
  decoder_.feed(bytes);
  while (const auto event = decoder_.next()) {
    if (event->kind == codec::PacketDecoder::EventKind::Packet) {
      on_packet(event->type, event->payload);
    } else if (event->kind == codec::PacketDecoder::EventKind::BadChecksum) {
      inputs_.emplace_back(
          protocol::Error{"packet of type " + std::to_string(event->type) + " with a bad checksum; discarded"});
    } else if (event->kind == codec::PacketDecoder::EventKind::BadCount) {
      inputs_.emplace_back(protocol::Error{"packet header with an impossible count; skipped"});
    }
  }
}

std::optional<NativeInput> AriaClient::next() {
  if (inputs_.empty()) return std::nullopt;
  NativeInput input = std::move(inputs_.front());
  inputs_.pop_front();
  return input;
}

std::size_t AriaClient::expire(SteadyTime now, std::chrono::milliseconds timeout) {
  if (!decoder_.in_packet() || now - last_bytes_ < timeout) return 0;
  const std::uint64_t discarded = decoder_.stats().discarded_bytes;
  (void)decoder_.abandon();
  // What the decoder can still make of the bytes after the abandoned header.
  while (const auto event = decoder_.next()) {
    if (event->kind == codec::PacketDecoder::EventKind::Packet) on_packet(event->type, event->payload);
  }
  // At least the header's first byte went.
  return std::max<std::size_t>(1, static_cast<std::size_t>(decoder_.stats().discarded_bytes - discarded));
}

bool AriaClient::admit(std::string_view message, MessageOrigin /*origin*/) {
  // AROS packets only: the SIPs (and the answers above, which bypass this).
  return message.size() >= 2 && static_cast<unsigned char>(message[0]) == codec::kSync0 &&
         static_cast<unsigned char>(message[1]) == codec::kSync1;
}

void AriaClient::reply(protocol::Bytes packet) {
  inputs_.emplace_back(native_input::Reply{make_buffer(std::string(packet.begin(), packet.end()))});
}

void AriaClient::on_packet(protocol::Byte type, protocol::ByteView payload) {
  if (synced_ < kSynced) {
    // Types 0, 1 and 2 are SYNC0, SYNC1 and SYNC2 until the handshake is done.
    if (type == codec::command::kSync0) {
      reply(codec::encode_packet(codec::command::kSync0));
      synced_ = 1;
    } else if (type == codec::command::kSync1 && synced_ == 1) {
      reply(codec::encode_packet(codec::command::kSync1));
      synced_ = 2;
    } else if (type == codec::command::kSync2 && synced_ == 2) {
      const auto& identity = link_.identity();
      if (!identity) {
        // The bridge has not met the robot yet: no answer, and the program retries.
        synced_ = 0;
        return;
      }
      reply(codec::encode_identity(*identity));
      synced_ = kSynced;
    } else {
      synced_ = 0;  // out of turn: the program starts again at SYNC0
    }
    return;
  }
  switch (type) {
    case codec::command::kPulse:
    case codec::command::kHostBaud:
      return;
    case codec::command::kOpen:
      inputs_.emplace_back(protocol::ClientRequest{protocol::Subscribe{0}});
      return;
    case codec::command::kClose:
      inputs_.emplace_back(protocol::ClientRequest{protocol::Unsubscribe{}});
      inputs_.emplace_back(native_input::Release{});
      synced_ = 0;
      return;
    case codec::command::kConfig:
      if (!link_.config_packet().empty()) reply(link_.config_packet());
      return;
    default:
      break;
  }
  const codec::Command command = codec::decode_command(type, payload);
  if (type == codec::command::kEnable && command.argument == codec::Argument{0}) return;
  inputs_.emplace_back(protocol::ClientRequest{protocol::SendCommand{codec::encode_packet(type, payload)}});
}

}  // namespace flockbridge::bridge::pioneer
