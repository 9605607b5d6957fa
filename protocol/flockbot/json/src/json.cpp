#include "flockbridge/protocol/flockbot/json.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <span>
#include <string>

#include "flockbridge/protocol/flockbot/commands.hpp"
#include "flockbridge/protocol/json_arguments.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::protocol::flockbot {
namespace {

using nlohmann::json;
namespace codec = protocol::json;

Result<ClientRequest> checked_command(Bytes payload) {
  auto checked = check_command(payload);
  if (!checked) return checked.error();
  return ClientRequest{SendCommand{
      std::move(payload),
  }};
}

Result<ClientRequest> parse_raw(const json& object) {
  const auto it = object.find("payload");
  if (it == object.end() || !it->is_array()) {
    return codec::argument_error("raw", "payload", "must be an array of byte values, e.g. [68,77,83,10]");
  }
  Bytes payload;
  for (const json& element : *it) {
    const auto byte = codec::whole_number(element);
    if (!byte || *byte < 0 || *byte > 255)
      return codec::argument_error("raw", "payload", "must hold whole numbers from 0 to 255");
    payload.push_back(static_cast<Byte>(*byte));
  }
  return checked_command(std::move(payload));
}

Result<ClientRequest> parse_table_command(const CommandSpec& spec, const json& object) {
  std::array<std::string_view, kMaxCommandFields> names{};
  std::size_t count = 0;
  for (const FieldSpec& field : spec.fields()) names[count++] = field.name;
  if (auto checked = codec::only(spec.name, object, std::span(names.data(), count)); !checked) return checked.error();
  std::array<long long, kMaxCommandFields> values{};
  std::string text;
  std::size_t index = 0;
  for (const FieldSpec& field : spec.fields()) {
    const auto it = object.find(std::string(field.name));
    if (it == object.end()) return codec::argument_error(spec.name, "needs", std::string("'").append(field.name) + "'");
    if (field.type == FieldType::Text) {
      if (!it->is_string()) return codec::argument_error(spec.name, field.name, "must be a string");
      text = it->get<std::string>();
    } else {
      const auto number = codec::whole_number(*it);
      if (!number) return codec::argument_error(spec.name, field.name, "must be a whole number");
      values[index] = *number;
    }
    ++index;
  }
  auto payload = build_command(spec, std::span(values.data(), spec.fields().size()), text);
  if (!payload) return payload.error();
  return ClientRequest{SendCommand{std::move(payload).value()}};
}

/// Appends `{"left":..,"right":..}` (and `"avg"` when given) of `add`ed values.
template <typename Value, typename Add>
void append_sides(std::string& out, Value left, Value right, const Value* avg, Add add) {
  out += R"({"left":)";
  add(out, left);
  out += R"(,"right":)";
  add(out, right);
  if (avg != nullptr) {
    out += R"(,"avg":)";
    add(out, *avg);
  }
  out += '}';
}

}  // namespace

std::string packet_json(ByteView payload) {
  return nlohmann::ordered_json{{"type", "packet"},
                                {"tag", describe_tag(payload.first(std::min<std::size_t>(payload.size(), 3)))},
                                {"payload", Bytes(payload.begin(), payload.end())}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string sensor_json(const SensorReading& r, std::uint64_t seq, double unix_seconds, const SensorUnits& units) {
  // Written out directly rather than built as a json value and dumped: this
  // runs for every packet, on a loop that has been asleep since the last one,
  // and the value's nodes and their allocations cost ten times the text.
  const auto add_int = [](std::string& out, auto value) { codec::append_number(out, value); };
  const auto add_real = [](std::string& out, double value) { codec::append_real(out, value); };
  // Rounded so that a reading does not carry the float noise of its factor
  // (0.1 mV and 0.01 mm are far below what the sensors resolve).
  const auto scaled = [](double raw, double factor, double steps_per_unit) {
    return std::round(raw * factor * steps_per_unit) / steps_per_unit;
  };
  std::string out;
  out.reserve(400);
  out += R"({"type":"sensor","seq":)";
  codec::append_number(out, seq);
  out += R"(,"ts":)";
  codec::append_real(out, unix_seconds);
  out += R"(,"battery":)";
  codec::append_number(out, r.battery);
  out += R"(,"ir":[)";
  for (std::size_t i = 0; i < r.ir.size(); ++i) {
    if (i > 0) out += ',';
    codec::append_number(out, r.ir[i]);
  }
  out += R"(],"l_bump":)";
  codec::append_number(out, r.l_bump);
  out += R"(,"h_bump":)";
  codec::append_number(out, r.h_bump);
  out += R"(,"odometer":)";
  append_sides(out, r.odometer_left, r.odometer_right, &r.odometer_avg, add_int);
  out += R"(,"wheel_watcher":)";
  append_sides<std::int16_t>(out, r.wheel_watcher_left, r.wheel_watcher_right, nullptr, add_int);
  if (const double f = units.ir_volts_per_count; f != 0) {
    out += R"(,"ir_v":[)";
    for (std::size_t i = 0; i < r.ir.size(); ++i) {
      if (i > 0) out += ',';
      codec::append_real(out, scaled(r.ir[i], f, 1e4));
    }
    out += ']';
  }
  if (const double f = units.odometer_mm_per_count; f != 0) {
    const double avg = scaled(r.odometer_avg, f, 1e2);
    out += R"(,"odometer_mm":)";
    append_sides(out, scaled(r.odometer_left, f, 1e2), scaled(r.odometer_right, f, 1e2), &avg, add_real);
  }
  if (const double f = units.wheel_watcher_mm_per_count; f != 0) {
    out += R"(,"wheel_watcher_mm":)";
    append_sides<double>(out, scaled(r.wheel_watcher_left, f, 1e2), scaled(r.wheel_watcher_right, f, 1e2), nullptr,
                         add_real);
  }
  out += '}';
  return out;
}

Result<SendCommand> parse_json_command(std::string_view cmd, const nlohmann::json& object) {
  Result<ClientRequest> request = Error{""};
  if (cmd == "raw") {
    request = parse_raw(object);
  } else if (const CommandSpec* spec = find_command(cmd); spec != nullptr) {
    request = parse_table_command(*spec, object);
  } else {
    return Error{"unknown command '" + std::string(cmd) + "'"};
  }
  if (!request) return request.error();
  return std::get<SendCommand>(std::move(request).value());
}

Result<Bytes> drive_command(const nlohmann::json& object, const SensorUnits& units) {
  if (units.wheel_mm_s_per_percent <= 0) {
    return Error{
        "drive: this Flockbot's wheel speed in mm/s is not configured (flockbot.units.wheel_mm_s_per_percent, "
        "--wheel-mm-s-per-percent); use move, rotate or wheels"};
  }
  // Each wheel's speed from the robot's: v -+ w * base / 2, w in radians a
  // second. Alone, each is bounded by what one wheel at its fastest gives.
  const double fastest = 100 * units.wheel_mm_s_per_percent;
  const double half_base = units.wheel_base_mm / 2.0;
  const double spin_deg_s = half_base > 0 ? fastest / half_base * 180.0 / std::numbers::pi : 0.0;
  auto drive = json_arguments::drive_arguments("drive", object, fastest, std::floor(spin_deg_s));
  if (!drive) return drive.error();
  const double turn = drive.value().w_deg_s * std::numbers::pi / 180.0 * half_base;
  const double left = std::round((drive.value().v_mm_s - turn) / units.wheel_mm_s_per_percent);
  const double right = std::round((drive.value().v_mm_s + turn) / units.wheel_mm_s_per_percent);
  if (std::abs(left) > 100 || std::abs(right) > 100) {
    return Error{"drive: too fast for this Flockbot: a wheel would need more than " +
                 std::to_string(static_cast<int>(fastest)) + " mm/s"};
  }
  const std::array<long long, 2> wheels{static_cast<long long>(left), static_cast<long long>(right)};
  return build_command(*find_command("wheels"), wheels);
}

ParsedRequest parse_json_request(std::string_view line) {
  codec::ParsedLine parsed = codec::parse_line(line);
  if (!parsed.object) return {std::move(parsed.id), parsed.object.error()};
  if (auto request = codec::parse_bridge_request(parsed.cmd, parsed.object.value()))
    return {std::move(parsed.id), *request};
  auto command = parse_json_command(parsed.cmd, parsed.object.value());
  if (!command) return {std::move(parsed.id), command.error()};
  return {std::move(parsed.id), ClientRequest{std::move(command).value()}};
}

}  // namespace flockbridge::protocol::flockbot
