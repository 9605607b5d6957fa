#include "flockbridge/protocol/pioneer/commands.hpp"

#include <array>
#include <cstdlib>

namespace flockbridge::protocol::pioneer {
namespace {

struct Named {
  Byte number;
  std::string_view name;
};

// Types 0..2 are named after what they are once a client is connected.
constexpr std::array kNames{
    Named{command::kPulse, "PULSE"},     Named{command::kOpen, "OPEN"},
    Named{command::kClose, "CLOSE"},     Named{command::kPolling, "POLLING"},
    Named{command::kEnable, "ENABLE"},   Named{command::kSetA, "SETA"},
    Named{command::kSetV, "SETV"},       Named{command::kSetO, "SETO"},
    Named{command::kMove, "MOVE"},       Named{command::kRotate, "ROTATE"},
    Named{command::kSetRV, "SETRV"},     Named{command::kVel, "VEL"},
    Named{command::kHead, "HEAD"},       Named{command::kDHead, "DHEAD"},
    Named{command::kSay, "SAY"},         Named{command::kConfig, "CONFIG"},
    Named{command::kEncoder, "ENCODER"}, Named{command::kRVel, "RVEL"},
    Named{command::kDCHead, "DCHEAD"},   Named{command::kSetRA, "SETRA"},
    Named{command::kSonar, "SONAR"},     Named{command::kStop, "STOP"},
    Named{command::kDigOut, "DIGOUT"},   Named{command::kVel2, "VEL2"},
    Named{command::kGripper, "GRIPPER"}, Named{command::kHostBaud, "HOSTBAUD"},
    Named{command::kEStop, "E_STOP"},    Named{command::kBatteryInfo, "BATTERYINFO"},
};

}  // namespace

std::string command_name(Byte number) {
  for (const Named& named : kNames) {
    if (named.number == number) return std::string(named.name);
  }
  return "command " + std::to_string(number);
}

Result<Done> check_command(const Command& command) {
  if (const int* value = std::get_if<int>(&command.argument)) {
    if (std::abs(*value) > kMaxIntArgument) {
      return Error{command_name(command.number) + ": " + std::to_string(*value) + " is out of range (-" +
                   std::to_string(kMaxIntArgument) + " to " + std::to_string(kMaxIntArgument) + ")"};
    }
  }
  if (const auto* text = std::get_if<std::string>(&command.argument)) {
    if (text->size() > kMaxPayload - 2) {
      return Error{command_name(command.number) + ": a string of " + std::to_string(text->size()) +
                   " characters is too long (at most " + std::to_string(kMaxPayload - 2) + ")"};
    }
  }
  if (const auto* raw = std::get_if<RawArgument>(&command.argument)) {
    if (raw->data.size() > kMaxPayload) {
      return Error{command_name(command.number) + ": " + std::to_string(raw->data.size()) +
                   " bytes of data are too many (at most " + std::to_string(kMaxPayload) + ")"};
    }
  }
  return Done{};
}

Bytes encode_command(const Command& command) {
  Bytes payload;
  if (const int* value = std::get_if<int>(&command.argument)) {
    const auto magnitude = static_cast<unsigned>(std::abs(*value));
    payload = {*value < 0 ? kNegativeInt : kPositiveInt, static_cast<Byte>(magnitude & 0xFF),
               static_cast<Byte>(magnitude >> 8)};
  } else if (const auto* text = std::get_if<std::string>(&command.argument)) {
    payload.push_back(kString);
    payload.push_back(static_cast<Byte>(text->size()));
    payload.insert(payload.end(), text->begin(), text->end());
  } else if (const auto* raw = std::get_if<RawArgument>(&command.argument)) {
    payload = raw->data;
  }
  return encode_packet(command.number, payload);
}

Command decode_command(Byte number, ByteView payload) {
  if (payload.empty()) return Command{number, NoArgument{}};
  if ((payload[0] == kPositiveInt || payload[0] == kNegativeInt) && payload.size() == 3) {
    const int magnitude = payload[1] | payload[2] << 8;
    return Command{number, payload[0] == kNegativeInt ? -magnitude : magnitude};
  }
  if (payload[0] == kString && payload.size() >= 2 && payload.size() == 2 + std::size_t{payload[1]}) {
    return Command{number, std::string(payload.begin() + 2, payload.end())};
  }
  return Command{number, RawArgument{Bytes(payload.begin(), payload.end())}};
}

Result<std::vector<Command>> split_commands(ByteView packets) {
  PacketDecoder decoder;
  decoder.feed(packets);
  std::vector<Command> commands;
  while (const auto event = decoder.next()) {
    if (event->kind != PacketDecoder::EventKind::Packet) return Error{"not whole AROS command packets"};
    commands.push_back(decode_command(event->type, event->payload));
  }
  if (commands.empty() || decoder.in_packet() || decoder.stats().discarded_bytes > 0 ||
      decoder.stats().bad_checksum > 0) {
    return Error{"not whole AROS command packets"};
  }
  return commands;
}

}  // namespace flockbridge::protocol::pioneer
