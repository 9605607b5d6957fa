#include "flockbridge/protocol/json_codec.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <concepts>
#include <optional>

#include "flockbridge/protocol/flockbot/commands.hpp"

namespace flockbridge::protocol::json {
namespace {

using nlohmann::json;
// Messages keep their keys in the order written, "type" first, for people
// reading the feed.
using ordered = nlohmann::ordered_json;

std::string dump(const ordered& value) {
  // Replace, never throw: text from the Uno or a client may not be UTF-8.
  return value.dump(-1, ' ', false, ordered::error_handler_t::replace);
}

/// A JSON integer as a long long; unsigned values beyond its range are
/// clamped (so that the range check refuses them instead of wrapping).
std::optional<long long> whole_number(const json& value) {
  if (value.is_number_unsigned()) {
    return static_cast<long long>(std::min<std::uint64_t>(value.get<std::uint64_t>(), LLONG_MAX));
  }
  if (value.is_number_integer()) return value.get<long long>();
  return std::nullopt;
}

Error argument_error(std::string_view command, std::string_view argument, std::string_view problem) {
  return Error{std::string(command) + ": " + std::string(argument) + " " + std::string(problem)};
}

Result<ClientRequest> parse_subscribe(const json& object) {
  std::int64_t interval = 0;
  if (const auto it = object.find("interval_ms"); it != object.end()) {
    const auto interval_ms = whole_number(*it);
    if (!interval_ms || *interval_ms < 0 || *interval_ms > kMaxIntervalMs) {
      return argument_error("subscribe", "interval_ms",
                            "must be a whole number of milliseconds from 0 to " + std::to_string(kMaxIntervalMs));
    }
    interval = *interval_ms;
  }
  return ClientRequest{Subscribe{static_cast<std::uint32_t>(interval)}};
}

Result<ClientRequest> parse_approve(const json& object) {
  static constexpr std::array<std::string_view, 1> kArguments{"client"};
  if (auto checked = only("approve", object, kArguments); !checked) return checked.error();
  const auto it = object.find("client");
  const auto client = it == object.end() ? std::nullopt : whole_number(*it);
  if (!client || *client <= 0) {
    return argument_error("approve", "client", "must be the number of a waiting client, as pairing messages list them");
  }
  return ClientRequest{ApproveClient{static_cast<std::uint64_t>(*client)}};
}

Result<ClientRequest> parse_fleet_command(const json& object, std::string_view cmd) {
  static constexpr std::array<std::string_view, 1> kArguments{"robot"};
  if (auto checked = only(cmd, object, kArguments); !checked) return checked.error();
  const bool clear = cmd == "fleet_clear";
  const auto robot = object.find("robot");
  if (robot == object.end()) return ClientRequest{FleetEmergency{{}, clear}};
  if (!robot->is_string() || robot->get<std::string>().empty()) {
    return argument_error(cmd, "robot", "must be a robot's name, as fleet messages list them");
  }
  return ClientRequest{FleetEmergency{robot->get<std::string>(), clear}};
}

Result<ClientRequest> parse_set(const json& object) {
  static constexpr std::array<std::string_view, 2> kArguments{"key", "value"};
  if (auto checked = only("set", object, kArguments); !checked) return checked.error();
  const auto key = object.find("key");
  if (key == object.end() || !key->is_string()) {
    return argument_error("set", "key", "must name a setting, e.g. \"access.lease_idle_ms\"");
  }
  const auto value = object.find("value");
  if (value == object.end() || !(value->is_string() || value->is_number() || value->is_boolean())) {
    return argument_error("set", "value", "must be a string, a number or true or false");
  }
  return ClientRequest{
      ChangeSetting{key->get<std::string>(), value->is_string() ? value->get<std::string>() : value->dump()}};
}

Result<ClientRequest> parse_auth(const json& object) {
  static constexpr std::string_view kUsage = R"(: give {"cmd":"auth","pin":"..."} or {"cmd":"auth","teacher":"..."})";
  static constexpr std::array<std::string_view, 2> kArguments{"pin", "teacher"};
  if (auto checked = only("auth", object, kArguments); !checked) return checked.error();
  const auto pin = object.find("pin");
  const auto teacher = object.find("teacher");
  if ((pin == object.end()) == (teacher == object.end())) {
    return Error{"auth: give one of \"pin\" and \"teacher\"" + std::string(kUsage)};
  }
  const auto given = pin != object.end() ? pin : teacher;
  if (!given->is_string()) return Error{"auth: the secret must be a string" + std::string(kUsage)};
  return ClientRequest{Authenticate{teacher != object.end(), given->get<std::string>()}};
}

Result<ClientRequest> checked_command(Bytes payload) {
  auto checked = check_command(payload);
  if (!checked) return checked.error();
  return ClientRequest{SendCommand{std::move(payload), checked.value()}};
}

Result<ClientRequest> parse_raw(const json& object) {
  const auto it = object.find("payload");
  if (it == object.end() || !it->is_array()) {
    return argument_error("raw", "payload", "must be an array of byte values, e.g. [68,77,83,10]");
  }
  Bytes payload;
  for (const json& element : *it) {
    const auto byte = whole_number(element);
    if (!byte || *byte < 0 || *byte > 255)
      return argument_error("raw", "payload", "must hold whole numbers from 0 to 255");
    payload.push_back(static_cast<Byte>(*byte));
  }
  return checked_command(std::move(payload));
}

Result<ClientRequest> parse_table_command(const CommandSpec& spec, const json& object) {
  std::array<std::string_view, kMaxCommandFields> names{};
  std::size_t count = 0;
  for (const FieldSpec& field : spec.fields()) names[count++] = field.name;
  if (auto checked = only(spec.name, object, std::span(names.data(), count)); !checked) return checked.error();
  std::array<long long, kMaxCommandFields> values{};
  std::string text;
  std::size_t index = 0;
  for (const FieldSpec& field : spec.fields()) {
    const auto it = object.find(std::string(field.name));
    if (it == object.end()) return argument_error(spec.name, "needs", "'" + std::string(field.name) + "'");
    if (field.type == FieldType::Text) {
      if (!it->is_string()) return argument_error(spec.name, field.name, "must be a string");
      text = it->get<std::string>();
    } else {
      const auto number = whole_number(*it);
      if (!number) return argument_error(spec.name, field.name, "must be a whole number");
      values[index] = *number;
    }
    ++index;
  }
  auto payload = build_command(spec, std::span(values.data(), spec.fields().size()), text);
  if (!payload) return payload.error();
  return ClientRequest{SendCommand{std::move(payload).value(), &spec}};
}

}  // namespace

Result<Done> only(std::string_view cmd, const json& object, std::span<const std::string_view> allowed) {
  for (const auto& item : object.items()) {
    const std::string& key = item.key();
    if (key == "cmd" || key == "id") continue;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string expected;
      for (const std::string_view name : allowed) expected += (expected.empty() ? "" : ", ") + std::string(name);
      return Error{std::string(cmd) + ": has no argument '" + key + "'; " +
                   (expected.empty() ? "it takes none" : "it takes " + expected)};
    }
  }
  return Done{};
}

std::string hello(std::string_view session, LinkState state, std::string_view reason, std::uint64_t client,
                  std::string_view role, const RobotDescription& robot, const AccessDescription& access) {
  ordered message{{"type", "hello"},       {"version", kVersion},  {"session", session},
                  {"robot", robot.family}, {"model", robot.model}, {"link", link_state_name(state)}};
  if (robot.simulated) {
    message["simulated"] = ordered{{"room_mm", robot.room_mm ? ordered(*robot.room_mm) : ordered(nullptr)}};
  }
  if (!reason.empty()) message["reason"] = reason;
  message["client"] = client;
  message["role"] = role;
  message["access"] = ordered{{"pin", access.pin}, {"teacher", access.teacher}};
  message["capabilities"] = ordered::array();
  for (const std::string& command : robot.commands) message["capabilities"].push_back(command);
  return dump(message);
}

namespace {

/// Appends an integer, as JSON writes it.
template <std::integral Integer>
void append_number(std::string& out, Integer value) {
  std::array<char, 24> text{};
  const auto end = std::to_chars(text.data(), text.data() + text.size(), value).ptr;
  out.append(text.data(), end);
}

/// Appends a real in the shortest decimal that reads back as the same
/// double, with ".0" on a whole number (as nlohmann::json writes one, so a
/// reader's language sees a real either way), and null for what JSON cannot
/// hold.
void append_real(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  std::array<char, 400> text{};  // fixed notation of the largest double fits
  const auto end = std::to_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed).ptr;
  const std::string_view written(text.data(), static_cast<std::size_t>(end - text.data()));
  out += written;
  if (written.find('.') == std::string_view::npos) out += ".0";
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

std::string sensor(const SensorReading& r, std::uint64_t seq, double unix_seconds, const SensorUnits& units) {
  // Written out directly rather than built as a json value and dumped: this
  // runs for every packet, on a loop that has been asleep since the last one,
  // and the value's nodes and their allocations cost ten times the text.
  const auto add_int = [](std::string& out, auto value) { append_number(out, value); };
  const auto add_real = [](std::string& out, double value) { append_real(out, value); };
  // Rounded so that a reading does not carry the float noise of its factor
  // (0.1 mV and 0.01 mm are far below what the sensors resolve).
  const auto scaled = [](double raw, double factor, double steps_per_unit) {
    return std::round(raw * factor * steps_per_unit) / steps_per_unit;
  };
  std::string out;
  out.reserve(400);
  out += R"({"type":"sensor","seq":)";
  append_number(out, seq);
  out += R"(,"ts":)";
  append_real(out, unix_seconds);
  out += R"(,"battery":)";
  append_number(out, r.battery);
  out += R"(,"ir":[)";
  for (std::size_t i = 0; i < r.ir.size(); ++i) {
    if (i > 0) out += ',';
    append_number(out, r.ir[i]);
  }
  out += R"(],"l_bump":)";
  append_number(out, r.l_bump);
  out += R"(,"h_bump":)";
  append_number(out, r.h_bump);
  out += R"(,"odometer":)";
  append_sides(out, r.odometer_left, r.odometer_right, &r.odometer_avg, add_int);
  out += R"(,"wheel_watcher":)";
  append_sides<std::int16_t>(out, r.wheel_watcher_left, r.wheel_watcher_right, nullptr, add_int);
  if (const double f = units.battery_volts_per_count; f != 0) {
    out += R"(,"battery_v":)";
    append_real(out, scaled(r.battery, f, 1e4));
  }
  if (const double f = units.ir_volts_per_count; f != 0) {
    out += R"(,"ir_v":[)";
    for (std::size_t i = 0; i < r.ir.size(); ++i) {
      if (i > 0) out += ',';
      append_real(out, scaled(r.ir[i], f, 1e4));
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

std::string link(LinkState state, std::string_view reason) {
  ordered message{{"type", "link"}, {"state", link_state_name(state)}};
  if (!reason.empty()) message["reason"] = reason;
  return dump(message);
}

std::string packet(ByteView payload) {
  return dump(ordered{{"type", "packet"},
                      {"tag", describe_tag(payload.first(std::min<std::size_t>(payload.size(), 3)))},
                      {"payload", Bytes(payload.begin(), payload.end())}});
}

std::string emergency() {
  return dump(ordered{{"type", "emergency"}});
}

std::string dropped(std::uint64_t count) {
  return dump(ordered{{"type", "dropped"}, {"count", count}});
}

std::string ok(const nlohmann::json& id, std::optional<bool> confirmed) {
  ordered message{{"type", "ok"}};
  if (!id.is_null()) message["id"] = id;
  if (confirmed) message["confirmed"] = *confirmed;
  return dump(message);
}

std::string error(const nlohmann::json& id, const Error& error) {
  ordered message{{"type", "error"}};
  if (!id.is_null()) message["id"] = id;
  message["error"] = error.message;
  message["code"] = error_code_name(error.code);
  return dump(message);
}

std::string safety_stop(std::string_view reason) {
  return dump(ordered{{"type", "safety_stop"}, {"reason", reason}});
}

std::string authorised(const nlohmann::json& id, std::string_view role) {
  ordered message{{"type", "ok"}};
  if (!id.is_null()) message["id"] = id;
  message["role"] = role;
  return dump(message);
}

std::string lease_request(std::uint64_t client, std::string_view peer) {
  return dump(ordered{{"type", "lease_request"}, {"client", client}, {"peer", peer}});
}

namespace {

ordered latch_hold(const LatchHold& hold) {
  ordered out{{"source", hold.source}, {"by", ordered{{"client", hold.client}, {"peer", hold.peer}}}};
  if (!hold.reason.empty()) out["reason"] = hold.reason;
  out["since"] = hold.since;
  out["may_clear"] = hold.may_clear;
  return out;
}

}  // namespace

std::string emergency_latch(const LatchState& state) {
  ordered message{{"type", "emergency_latch"},
                  {"latched", state.latched},
                  {"by", ordered{{"client", state.by.client}, {"peer", state.by.peer}}},
                  {"since", state.by.since},
                  {"source", state.by.source}};
  if (!state.by.reason.empty()) message["reason"] = state.by.reason;
  message["may_clear"] = state.may_clear;
  if (state.latched) message["clear_by"] = state.clear_by;
  ordered holds = ordered::array();
  for (const LatchHold& hold : state.holds) holds.push_back(latch_hold(hold));
  message["holds"] = std::move(holds);
  return dump(message);
}

std::string fleet_sent(const json& id, const std::vector<std::string>& offline, std::string_view note) {
  ordered message{{"type", "ok"}};
  if (!id.is_null()) message["id"] = id;
  message["offline"] = offline;
  message["note"] = note;
  return dump(message);
}

std::string pairing(std::span<const WaitingClient> waiting) {
  ordered list = ordered::array();
  for (const WaitingClient& each : waiting) {
    list.push_back(ordered{{"client", each.client}, {"peer", each.peer}, {"since", each.since}});
  }
  return dump(ordered{{"type", "pairing"}, {"waiting", std::move(list)}});
}

std::string lease(const std::optional<LeaseHolder>& holder, std::string_view reason) {
  ordered message{{"type", "lease"}};
  if (holder) {
    message["holder"] =
        ordered{{"client", holder->client}, {"peer", holder->peer}, {"kind", holder->kind}, {"since", holder->since}};
  } else {
    message["holder"] = nullptr;
    if (!reason.empty()) message["reason"] = reason;
  }
  return dump(message);
}

std::string stats(const nlohmann::json& id, const StatsSnapshot& s) {
  const LinkStats& l = s.link;
  ordered failed = ordered::object();
  for (std::size_t i = 0; i < kErrorCodeCount; ++i) {
    failed[std::string(error_code_name(static_cast<ErrorCode>(i)))] = s.bridge.failed[i];
  }
  ordered clients = ordered::array();
  for (const ClientSnapshot& c : s.list_clients ? std::span(s.clients) : std::span<const ClientSnapshot>()) {
    clients.push_back(ordered{{"id", c.id},
                              {"kind", c.kind},
                              {"peer", c.peer},
                              {"commands", c.commands},
                              {"sensor_dropped", c.sensor_dropped},
                              {"queued", c.queued},
                              {"refused", c.refused},
                              {"withheld", c.withheld},
                              {"extensions", c.extensions}});
  }
  ordered message{{"type", "stats"}};
  if (!id.is_null()) message["id"] = id;
  message["uptime_s"] = s.uptime_s;
  ordered link{{"state", link_state_name(s.link_state)}};
  for (const auto& [name, value] : s.link_counters) link[name] = value;
  message["link"] = std::move(link);
  message["commands"] = ordered{{"received", s.bridge.commands_received},
                                {"sent", l.commands_sent},
                                {"acknowledged", l.commands_acknowledged},
                                {"delivered", l.commands_delivered},
                                {"confirmed", l.commands_confirmed},
                                {"unconfirmed", l.commands_unconfirmed},
                                {"failed", failed}};
  message["sensors"] = ordered{{"published", s.bridge.sensor_packets},
                               {"sent", s.bridge.sensor_messages_sent},
                               {"dropped", s.bridge.sensor_messages_dropped}};
  message["safety_stops"] = s.bridge.safety_stops;
  message["control"] = ordered{{"holder", s.control_holder ? ordered(*s.control_holder) : ordered(nullptr)},
                               {"changes", s.bridge.control_changes},
                               {"refused", s.bridge.control_refused},
                               {"ignored", s.bridge.control_ignored}};
  message["clients"] = ordered{{"connected", s.clients.size()},
                               {"accepted", s.bridge.clients_accepted},
                               {"refused", s.bridge.clients_refused},
                               {"closed_stalled", s.bridge.clients_closed_stalled},
                               {"closed_behind", s.bridge.clients_closed_behind},
                               {"dead", s.bridge.clients_dead}};
  if (s.list_clients) message["clients"]["list"] = std::move(clients);
  if (s.mqtt) {
    ordered mqtt = ordered::object();
    for (const auto& [name, value] : *s.mqtt) mqtt[name] = value;
    message["mqtt"] = std::move(mqtt);
  }
  return dump(message);
}

ParsedLine parse_line(std::string_view line) {
  json object = json::parse(line, nullptr, false);
  if (object.is_discarded())
    return {nullptr, Error{"not valid JSON; send one object per line, e.g. {\"cmd\":\"stop\"}"}, {}};
  if (!object.is_object()) return {nullptr, Error{"a command is a JSON object, e.g. {\"cmd\":\"stop\"}"}, {}};
  json id = object.contains("id") ? object["id"] : json(nullptr);
  const auto cmd = object.find("cmd");
  if (cmd == object.end() || !cmd->is_string()) {
    return {std::move(id), Error{"missing \"cmd\": say what to do, e.g. {\"cmd\":\"stop\"}"}, {}};
  }
  std::string name = cmd->get<std::string>();
  return {std::move(id), std::move(object), std::move(name)};
}

std::optional<Result<ClientRequest>> parse_bridge_request(std::string_view cmd, const json& object) {
  if (cmd == "subscribe") return parse_subscribe(object);
  if (cmd == "unsubscribe") return ClientRequest{Unsubscribe{}};
  if (cmd == "stats") return ClientRequest{StatsRequest{}};
  if (cmd == "release") return ClientRequest{ReleaseControl{}};
  if (cmd == "take") return ClientRequest{TakeControl{}};
  if (cmd == "clear_emergency") return ClientRequest{ClearEmergency{}};
  if (cmd == "approve") return parse_approve(object);
  if (cmd == "set") return parse_set(object);
  if (cmd == "auth") return parse_auth(object);
  if (cmd == "fleet") return ClientRequest{FollowFleet{}};
  if (cmd == "fleet_emergency" || cmd == "fleet_clear") return parse_fleet_command(object, cmd);
  return std::nullopt;
}

Result<SendCommand> parse_flockbot_command(std::string_view cmd, const json& object) {
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

ParsedRequest parse_request(std::string_view line) {
  ParsedLine parsed = parse_line(line);
  if (!parsed.object) return {std::move(parsed.id), parsed.object.error()};
  if (auto request = parse_bridge_request(parsed.cmd, parsed.object.value())) return {std::move(parsed.id), *request};
  auto command = parse_flockbot_command(parsed.cmd, parsed.object.value());
  if (!command) return {std::move(parsed.id), command.error()};
  return {std::move(parsed.id), ClientRequest{std::move(command).value()}};
}

}  // namespace flockbridge::protocol::json
