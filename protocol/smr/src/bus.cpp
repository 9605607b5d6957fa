#include "flockbridge/protocol/smr/bus.hpp"

#include <algorithm>

namespace flockbridge::protocol::smr {

Bytes encode_polls() {
  Bytes bytes;
  for (const Poll& poll : kPolls) {
    const Byte body[] = {poll.module};
    const Bytes request = encode_message(MessageType::Bus, body);
    bytes.insert(bytes.end(), request.begin(), request.end());
    bytes.insert(bytes.end(), poll.padding, Byte{0});
  }
  return bytes;
}

Bytes encode_speed(Byte speed_module, int speed) {
  const int sent = std::clamp(speed, -127, 127);
  const Byte body[] = {speed_module, static_cast<Byte>(static_cast<std::int8_t>(sent))};
  return encode_message(MessageType::Bus, body);
}

std::optional<SpeedCommand> read_speed(ByteView body) noexcept {
  if (body.size() != 2 || (body[0] != module::kLeftSpeed && body[0] != module::kRightSpeed)) return std::nullopt;
  return SpeedCommand{body[0], static_cast<std::int8_t>(body[1])};
}

Reading ReadingHold::fill(const Reading& fresh) noexcept {
  // One part's fields (the part:: flag `part`) from one reading into another.
  const auto copy_part = [](unsigned part, const Reading& from, Reading& to) {
    switch (part) {
      case part::kLeft:
        to.left = from.left;
        break;
      case part::kRight:
        to.right = from.right;
        break;
      case part::kInfrared:
        to.ir = from.ir;
        break;
      case part::kLine:
        to.line = from.line;
        break;
      default:
        to.analog = from.analog;
        to.digital = from.digital;
        break;
    }
    to.parts |= part;
  };
  Reading out = fresh;
  for (std::size_t bit = 0; bit < age_.size(); ++bit) {
    const unsigned part = 1U << bit;
    if ((fresh.parts & part) != 0) {
      age_[bit] = 0;
      copy_part(part, fresh, last_);
    } else if ((last_.parts & part) != 0 && ++age_[bit] <= hold_periods_) {
      copy_part(part, last_, out);
    }
  }
  return out;
}

void ReadingHold::reset() noexcept {
  last_ = Reading{};
  age_ = {};
}

unsigned apply_reply(ByteView body, Reading& reading) noexcept {
  if (body.empty()) return 0;
  switch (body[0]) {
    case reply::kLeftEncoder:
    case reply::kRightEncoder: {
      if (body.size() < 3) return 0;
      MotorState& motor = body[0] == reply::kLeftEncoder ? reading.left : reading.right;
      motor.encoder = static_cast<std::uint16_t>(body[1] << 8 | body[2]);
      if (body.size() >= 5) {
        motor.status = body[3];
        motor.pwm = static_cast<int>(body[4]) - 128;
      }
      const unsigned filled = body[0] == reply::kLeftEncoder ? part::kLeft : part::kRight;
      reading.parts |= filled;
      return filled;
    }
    case reply::kLineSensor:
      if (body.size() < 1 + kLineCount) return 0;
      std::copy_n(body.begin() + 1, kLineCount, reading.line.begin());
      reading.parts |= part::kLine;
      return part::kLine;
    case reply::kInfrared:
      if (body.size() < 1 + kIrCount) return 0;
      std::copy_n(body.begin() + 1, kIrCount, reading.ir.begin());
      reading.parts |= part::kInfrared;
      return part::kInfrared;
    case reply::kPower: {
      if (body.size() != 8) return 0;
      // Bytes 1 and 2 hold the digital inputs (fedcba) and, two bits each,
      // the high bits of the analog inputs A (byte 1) and B..E (byte 2).
      reading.digital = body[1] >> 2;
      const int high[kAnalogCount] = {body[1] & 0x03, body[2] >> 6 & 0x03, body[2] >> 4 & 0x03, body[2] >> 2 & 0x03,
                                      body[2] & 0x03};
      for (std::size_t i = 0; i < kAnalogCount; ++i) reading.analog[i] = high[i] << 8 | body[3 + i];
      reading.parts |= part::kPower;
      return part::kPower;
    }
    default:
      return 0;
  }
}

double analog_volts(int counts) noexcept {
  return 4.1 * 3.5 / 1.1 / 1024.0 * counts;
}

Bytes encode_power(int digital, const std::array<int, kAnalogCount>& analog) {
  const auto high = [&](std::size_t i) { return static_cast<Byte>(analog[i] >> 8 & 0x03); };
  Bytes body{reply::kPower, static_cast<Byte>((digital & 0x3F) << 2 | high(0)),
             static_cast<Byte>(high(1) << 6 | high(2) << 4 | high(3) << 2 | high(4))};
  for (const int value : analog) body.push_back(static_cast<Byte>(value & 0xFF));
  return encode_message(MessageType::Bus, body);
}

Bytes encode_motor(Byte reply_code, std::uint16_t encoder, int status, int pwm) {
  const Byte body[] = {reply_code, static_cast<Byte>(encoder >> 8), static_cast<Byte>(encoder & 0xFF),
                       static_cast<Byte>(status), static_cast<Byte>(std::clamp(pwm, -128, 127) + 128)};
  return encode_message(MessageType::Bus, body);
}

std::vector<SpeedCommand> speed_commands(ByteView messages) {
  MessageDecoder decoder;
  decoder.feed(messages);
  std::vector<SpeedCommand> speeds;
  while (auto message = decoder.next()) {
    if (message->type != static_cast<std::uint8_t>(MessageType::Bus)) continue;
    if (const auto speed = read_speed(message->body)) speeds.push_back(*speed);
  }
  return speeds;
}

}  // namespace flockbridge::protocol::smr
