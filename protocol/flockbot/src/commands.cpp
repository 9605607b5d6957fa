#include "flockbridge/protocol/flockbot/commands.hpp"

#include <algorithm>
#include <optional>
#include <string>

namespace flockbridge::protocol::flockbot {
namespace {

constexpr FieldSpec kSpeed{"speed", FieldType::I8, -100, 100};
constexpr FieldSpec kDegrees{"deg", FieldType::U16, 0, 359};

constexpr CommandSpec command(std::string_view name, std::string_view code, bool motion,
                              std::array<FieldSpec, kMaxCommandFields> fields = {}, std::size_t count = 0,
                              bool json_form = true) {
  return CommandSpec{name, code, fields, count, motion, json_form};
}

// The tables of the protocol decisions, section 3. The second Move-to-distance
// row is the 16-bit distance a 2014 student client sends: accepted from
// binary clients and forwarded as sent, never built from JSON.
constexpr std::array kCommands{
    command("claw_open", "DGO", false),
    command("claw_close", "DGC", false),
    command("claw_can_close", "DGG", false),
    command("claw_set", "DGS", false, {FieldSpec{"pos", FieldType::U8, 0, 30}}, 1),
    command("camera_up", "DCU", false),
    command("camera_down", "DCD", false),
    command("camera_forward", "DCF", false),
    command("camera_set", "DCS", false, {FieldSpec{"pos", FieldType::U8, 0, 100}}, 1),
    command("lcd_clear", "DLC", false),
    command("lcd_cursor", "DLU", false, {FieldSpec{"row", FieldType::U8, 1, 2}, FieldSpec{"col", FieldType::U8, 1, 16}},
            2),
    command("lcd_write", "DLS", false, {FieldSpec{"text", FieldType::Text, 0, 16}}, 1),
    command("move", "DMS", true, {kSpeed}, 1),
    command("move_distance", "DMD", true, {kSpeed, FieldSpec{"dist", FieldType::U8, 0, 255}}, 2),
    command("move_distance", "DMD", true, {kSpeed, FieldSpec{"dist", FieldType::U16, 0, 65535}}, 2, false),
    command("wheels", "DMW", true,
            {FieldSpec{"left", FieldType::I8, -100, 100}, FieldSpec{"right", FieldType::I8, -100, 100}}, 2),
    command("rotate", "DRC", true, {kSpeed}, 1),
    command("arc", "DRA", true,
            {FieldSpec{"speed", FieldType::U8, 0, 100}, FieldSpec{"dist", FieldType::U8, 0, 128}, kDegrees}, 3),
    command("rotate_degrees", "DRD", true, {kSpeed, kDegrees}, 2),
    command("stop", "DST", false),
    command("reset_odometer", "DMR", false),
    command("emergency", "EMG", false),
};

constexpr std::size_t field_width(FieldType type) {
  switch (type) {
    case FieldType::U8:
    case FieldType::I8:
      return 1;
    case FieldType::U16:
      return 2;
    case FieldType::Text:
      return 1;  // the NUL terminator; the characters come on top
  }
  return 0;
}

std::optional<Error> check_value(const CommandSpec& spec, const FieldSpec& field, long long value) {
  if (value < field.min || value > field.max) {
    return Error{std::string(spec.name) + ": " + std::string(field.name) + " must be from " +
                 std::to_string(field.min) + " to " + std::to_string(field.max) + ", got " + std::to_string(value)};
  }
  return std::nullopt;
}

// Text as it travels: printable characters, then exactly one NUL at the end.
std::optional<Error> check_text(const CommandSpec& spec, const FieldSpec& field, ByteView text_and_nul) {
  const std::string prefix = std::string(spec.name) + ": ";
  if (text_and_nul.empty() || text_and_nul.back() != 0) {
    return Error{prefix + "text must end with a NUL byte (0x00)"};
  }
  const ByteView text = text_and_nul.first(text_and_nul.size() - 1);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_printable_ascii(text[i])) {
      return Error{prefix + "text may hold printable ASCII only; byte " + std::to_string(i) + " is 0x" +
                   to_hex(text.subspan(i, 1))};
    }
  }
  if (text.size() > static_cast<std::size_t>(field.max)) {
    return Error{prefix + "text is " + std::to_string(text.size()) + " characters; the display shows at most " +
                 std::to_string(field.max)};
  }
  return std::nullopt;
}

long long read_field(ByteView payload, std::size_t at, FieldType type) {
  switch (type) {
    case FieldType::U8:
      return payload[at];
    case FieldType::I8:
      return static_cast<std::int8_t>(payload[at]);
    case FieldType::U16:
      return read_u16le(payload, at);
    case FieldType::Text:
      break;
  }
  return 0;
}

std::string lengths_of(std::string_view code) {
  std::string text;
  for (const CommandSpec& spec : kCommands) {
    if (spec.code != code) continue;
    if (!text.empty()) text += " or ";
    text += std::to_string(spec.fixed_length());
  }
  return text;
}

}  // namespace

std::size_t CommandSpec::fixed_length() const noexcept {
  std::size_t length = code.size();
  for (const FieldSpec& field : fields()) length += field_width(field.type);
  return length;
}

bool CommandSpec::has_text() const noexcept {
  return std::any_of(fields().begin(), fields().end(),
                     [](const FieldSpec& field) { return field.type == FieldType::Text; });
}

std::span<const CommandSpec> command_table() noexcept {
  return kCommands;
}

const CommandSpec* find_command(std::string_view name) noexcept {
  for (const CommandSpec& spec : kCommands) {
    if (spec.json_form && spec.name == name) return &spec;
  }
  return nullptr;
}

Result<const CommandSpec*> check_command(ByteView payload) {
  if (payload.empty()) return Error{"empty command"};
  if (payload.size() < 3) {
    return Error{"command '" + describe_tag(payload) +
                 "' is too short: a command is a type letter and two code letters, then its data"};
  }
  const std::string code(payload.begin(), payload.begin() + 3);
  if (code == "CFG") return Error{"CFG is sent by the bridge from its configuration, not by clients"};
  if (code == "ACK" || code == "NAK") return Error{code + " belongs to the serial link; the bridge sends it itself"};

  bool known = false;
  for (const CommandSpec& spec : kCommands) {
    if (spec.code != code) continue;
    known = true;
    const bool length_fits =
        spec.has_text() ? payload.size() >= spec.fixed_length() : payload.size() == spec.fixed_length();
    if (!length_fits) continue;
    std::size_t at = 3;
    for (const FieldSpec& field : spec.fields()) {
      if (field.type == FieldType::Text) {
        if (auto error = check_text(spec, field, payload.subspan(at))) return *error;
        break;  // text is always the last field
      }
      if (auto error = check_value(spec, field, read_field(payload, at, field.type))) return *error;
      at += field_width(field.type);
    }
    return &spec;
  }
  if (!known) return Error{"unknown command '" + describe_tag(payload.first(3)) + "'"};
  const CommandSpec& first =
      *std::find_if(kCommands.begin(), kCommands.end(), [&](const CommandSpec& spec) { return spec.code == code; });
  return Error{std::string(first.name) + " (" + code + ") is " + (first.has_text() ? "at least " : "") +
               lengths_of(code) + " bytes long, got " + std::to_string(payload.size())};
}

bool sets_robot_moving(const CommandSpec& spec, ByteView payload) noexcept {
  if (!spec.motion) return false;
  std::size_t at = spec.code.size();
  for (const FieldSpec& field : spec.fields()) {
    const bool speed = field.name == "speed" || field.name == "left" || field.name == "right";
    if (speed && at < payload.size() && read_field(payload, at, field.type) != 0) return true;
    at += field_width(field.type);
  }
  return false;
}

bool is_stop(ByteView payload) noexcept {
  return is_emergency(payload) ||
         (payload.size() == 3 && std::equal(kStopCode.begin(), kStopCode.end(), payload.begin()));
}

Result<Bytes> build_command(const CommandSpec& spec, std::span<const long long> values, std::string_view text) {
  Bytes payload(spec.code.begin(), spec.code.end());
  std::size_t index = 0;
  for (const FieldSpec& field : spec.fields()) {
    const long long value = index < values.size() ? values[index] : 0;
    ++index;
    switch (field.type) {
      case FieldType::Text: {
        payload.insert(payload.end(), text.begin(), text.end());
        payload.push_back(0);
        if (auto error = check_text(spec, field, ByteView(payload).subspan(spec.code.size()))) return *error;
        continue;
      }
      case FieldType::U8:
      case FieldType::I8:
        if (auto error = check_value(spec, field, value)) return *error;
        payload.push_back(static_cast<Byte>(value));
        continue;
      case FieldType::U16:
        if (auto error = check_value(spec, field, value)) return *error;
        append_u16le(payload, static_cast<std::uint16_t>(value));
        continue;
    }
  }
  return payload;
}

}  // namespace flockbridge::protocol::flockbot
