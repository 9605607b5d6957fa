#include "flockbridge/protocol/json_codec.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <concepts>
#include <optional>

#include "flockbridge/protocol/json_depth.hpp"

namespace flockbridge::protocol::json {
namespace {

using nlohmann::json;
// Messages keep their keys in the order written, "type" first, for people
// reading the feed.
using ordered = nlohmann::ordered_json;

std::string dump(const ordered& value) {
  // Replace, never throw: text from the robot or a client may not be UTF-8.
  return value.dump(-1, ' ', false, ordered::error_handler_t::replace);
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

}  // namespace

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
    message["simulated"] =
        ordered{{"room_mm", robot.room_mm ? ordered(*robot.room_mm) : ordered(nullptr)}, {"boxes_mm", robot.boxes_mm}};
  }
  if (robot.replay != nullptr) {
    message["replay"] = ordered{
        {"file", robot.replay->file}, {"recorded_at", robot.replay->recorded_at}, {"speed", robot.replay->speed}};
  }
  if (robot.found != nullptr) {
    message["found"] = ordered{{"device", robot.found->device},
                               {"baud", robot.found->baud},
                               {"took_ms", std::round(robot.found->took_ms * 10) / 10},
                               {"usb", robot.found->usb.empty() ? ordered(nullptr) : ordered(robot.found->usb)}};
  }
  if (!reason.empty()) message["reason"] = reason;
  message["client"] = client;
  message["role"] = role;
  message["access"] = ordered{{"pin", access.pin}, {"teacher", access.teacher}};
  message["capabilities"] = ordered::array();
  for (const std::string& command : robot.commands) message["capabilities"].push_back(command);
  message["geometry"] = geometry(robot.geometry != nullptr ? *robot.geometry : RobotGeometry{});
  return dump(message);
}

namespace {

ordered optional_number(const std::optional<double>& value) {
  return value ? ordered(*value) : ordered(nullptr);
}

double rounded_to(double value, double steps_per_unit) {
  return std::round(value * steps_per_unit) / steps_per_unit;
}

void append_optional(std::string& out, const std::optional<double>& value, double steps_per_unit) {
  if (value) {
    append_real(out, rounded_to(*value, steps_per_unit));
  } else {
    out += "null";
  }
}

}  // namespace

ordered geometry(const RobotGeometry& g) {
  ordered footprint{{"radius_mm", optional_number(g.radius_mm)},
                    {"length_mm", optional_number(g.length_mm)},
                    {"width_mm", optional_number(g.width_mm)}};
  ordered ranges = ordered::array();
  for (const RangeSensor& r : g.ranges) {
    ranges.push_back(ordered{{"name", r.name},
                             {"kind", range_kind_name(r.kind)},
                             {"deg", optional_number(r.deg)},
                             {"x_mm", optional_number(r.x_mm)},
                             {"y_mm", optional_number(r.y_mm)},
                             {"max_mm", optional_number(r.max_mm)}});
  }
  return ordered{{"footprint", std::move(footprint)},
                 {"wheel_base_mm", optional_number(g.wheel_base_mm)},
                 {"max_v_mm_s", optional_number(g.max_v_mm_s)},
                 {"max_w_deg_s", optional_number(g.max_w_deg_s)},
                 {"ranges", std::move(ranges)},
                 {"bumpers", g.bumpers}};
}

namespace {

std::optional<double> number_in(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return std::nullopt;
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number()) return std::nullopt;
  return found->get<double>();
}

}  // namespace

RobotGeometry geometry_from_json(const nlohmann::json& json) {
  RobotGeometry g;
  if (!json.is_object()) return g;
  if (const auto footprint = json.find("footprint"); footprint != json.end()) {
    g.radius_mm = number_in(*footprint, "radius_mm");
    g.length_mm = number_in(*footprint, "length_mm");
    g.width_mm = number_in(*footprint, "width_mm");
  }
  g.wheel_base_mm = number_in(json, "wheel_base_mm");
  g.max_v_mm_s = number_in(json, "max_v_mm_s");
  g.max_w_deg_s = number_in(json, "max_w_deg_s");
  if (const auto ranges = json.find("ranges"); ranges != json.end() && ranges->is_array()) {
    for (const nlohmann::json& r : *ranges) {
      if (!r.is_object()) continue;
      RangeSensor sensor;
      if (const auto name = r.find("name"); name != r.end() && name->is_string())
        sensor.name = name->get<std::string>();
      const auto kind = r.find("kind");
      sensor.kind =
          kind != r.end() && kind->is_string() && kind->get<std::string>() == range_kind_name(RangeKind::Sonar)
              ? RangeKind::Sonar
              : RangeKind::Ir;
      sensor.deg = number_in(r, "deg");
      sensor.x_mm = number_in(r, "x_mm");
      sensor.y_mm = number_in(r, "y_mm");
      sensor.max_mm = number_in(r, "max_mm");
      g.ranges.push_back(std::move(sensor));
    }
  }
  if (const auto bumpers = json.find("bumpers"); bumpers != json.end() && bumpers->is_array()) {
    for (const nlohmann::json& name : *bumpers) {
      if (name.is_string()) g.bumpers.push_back(name.get<std::string>());
    }
  }
  return g;
}

RobotStateEncoder::RobotStateEncoder(const RobotGeometry& geometry) : geometry_(geometry) {
  for (const RangeSensor& r : geometry_.ranges) range_keys_.push_back(ordered(r.name).dump() + ':');
  for (const std::string& name : geometry_.bumpers) bumper_names_.push_back(ordered(name).dump());
}

void RobotStateEncoder::append(std::string& out, const RobotState& state) const {
  out += R"("pose":)";
  if (state.pose) {
    out += R"({"x_mm":)";
    append_real(out, rounded_to(state.pose->x_mm, 10));
    out += R"(,"y_mm":)";
    append_real(out, rounded_to(state.pose->y_mm, 10));
    out += R"(,"th_deg":)";
    append_real(out, rounded_to(normalized_degrees(state.pose->th_deg), 10));
    out += '}';
  } else {
    out += "null";
  }
  out += R"(,"v_mm_s":)";
  append_optional(out, state.v_mm_s, 10);
  out += R"(,"w_deg_s":)";
  append_optional(out, state.w_deg_s, 10);
  out += R"(,"battery_v":)";
  // As the driver rounded it, to what its robot reports: the key is older
  // than the model in some families, and keeps its value there.
  if (state.battery_v) {
    append_real(out, *state.battery_v);
  } else {
    out += "null";
  }
  out += R"(,"ranges":{)";
  for (std::size_t i = 0; i < range_keys_.size(); ++i) {
    if (i > 0) out += ',';
    out += range_keys_[i];
    const std::optional<double> mm = i < state.ranges_mm.size() ? state.ranges_mm[i] : std::nullopt;
    if (mm) {
      append_number(out, std::llround(*mm));
    } else {
      out += "null";
    }
  }
  out += R"(},"bumped":[)";
  bool first = true;
  for (std::size_t i = 0; i < bumper_names_.size() && i < 64; ++i) {
    if ((state.bumped & (std::uint64_t{1} << i)) == 0) continue;
    if (!first) out += ',';
    first = false;
    out += bumper_names_[i];
  }
  out += ']';
}

std::string RobotStateEncoder::add_to(std::string object, const RobotState& state) const {
  const bool line_end = !object.empty() && object.back() == '\n';
  if (line_end) object.pop_back();
  if (object.empty() || object.back() != '}') return object;
  object.pop_back();
  if (object.size() > 1) object += ',';  // "{" alone: the family has no fields of its own
  append(object, state);
  object += '}';
  if (line_end) object += '\n';
  return object;
}

std::string link(LinkState state, std::string_view reason) {
  ordered message{{"type", "link"}, {"state", link_state_name(state)}};
  if (!reason.empty()) message["reason"] = reason;
  return dump(message);
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
  const CommandCounters& c = s.commands;
  ordered failed = ordered::object();
  for (std::size_t i = 0; i < kErrorCodeCount; ++i) {
    failed[std::string(error_code_name(static_cast<ErrorCode>(i)))] = s.bridge.failed[i];
  }
  ordered clients = ordered::array();
  for (const ClientSnapshot& client : s.list_clients ? std::span(s.clients) : std::span<const ClientSnapshot>()) {
    clients.push_back(ordered{{"id", client.id},
                              {"kind", client.kind},
                              {"peer", client.peer},
                              {"commands", client.commands},
                              {"sensor_dropped", client.sensor_dropped},
                              {"queued", client.queued},
                              {"refused", client.refused},
                              {"withheld", client.withheld},
                              {"extensions", client.extensions}});
  }
  ordered message{{"type", "stats"}};
  if (!id.is_null()) message["id"] = id;
  message["uptime_s"] = s.uptime_s;
  message["scheduling"] = ordered{{"class", s.scheduling.real_time ? "real-time" : "ordinary"},
                                  {"summary", s.scheduling.summary},
                                  {"asked", s.scheduling.asked},
                                  {"refused", s.scheduling.refused},
                                  {"pauses", s.scheduling.pauses}};
  ordered link{{"state", link_state_name(s.link_state)}};
  for (const auto& [name, value] : s.link_counters) link[name] = value;
  message["link"] = std::move(link);
  message["commands"] = ordered{{"received", s.bridge.commands_received},
                                {"sent", c.sent},
                                {"acknowledged", c.acknowledged},
                                {"delivered", c.delivered},
                                {"confirmed", c.confirmed},
                                {"unconfirmed", c.unconfirmed},
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
                               {"dead", s.bridge.clients_dead},
                               {"drivers_lost", s.bridge.drivers_lost}};
  if (s.list_clients) message["clients"]["list"] = std::move(clients);
  if (s.mqtt) {
    ordered mqtt = ordered::object();
    for (const auto& [name, value] : *s.mqtt) mqtt[name] = value;
    message["mqtt"] = std::move(mqtt);
  }
  ordered recording{{"active", s.recording_active}};
  for (const auto& [name, value] : s.recording) recording[name] = value;
  recording["file"] = s.recording_file;
  recording["last_error"] = s.recording_error;
  message["recording"] = std::move(recording);
  return dump(message);
}

namespace {

/// A sensor message's "ranges": the robot's own sensors by name where its
/// geometry is known (so that a viewer can offer them), else any name.
ordered ranges_schema(const RobotGeometry* geometry = nullptr) {
  const ordered mm{{"type", ordered::array({"integer", "null"})}};
  ordered schema{{"type", "object"},
                 {"description",
                  "each range sensor's distance in mm by its name (null: nothing in range); its kind and mounting are "
                  "in hello.geometry.ranges"}};
  if (geometry != nullptr) {
    ordered names = ordered::object();
    for (const RangeSensor& r : geometry->ranges) names[r.name] = mm;
    schema["properties"] = std::move(names);
  }
  schema["additionalProperties"] = mm;
  return schema;
}

}  // namespace

nlohmann::ordered_json sensor_schema(std::string_view family, const nlohmann::ordered_json& properties,
                                     const RobotGeometry* geometry) {
  using nlohmann::ordered_json;
  const ordered_json number{{"type", "number"}};
  const ordered_json number_or_null{{"type", ordered_json::array({"number", "null"})}};
  ordered_json all{
      {"type", {{"const", "sensor"}}},
      {"seq", {{"type", "integer"}, {"description", "the bridge's number of the reading, from 1 at its start"}}},
      {"ts", {{"type", "number"}, {"description", "when the bridge received it, Unix seconds"}}},
      {"pose",
       {{"type", "object"},
        {"description", "odometry: x forward, y left, from where the robot started or its pose was reset"},
        {"properties", {{"x_mm", number}, {"y_mm", number}, {"th_deg", number}}}}},
      {"v_mm_s", number_or_null},
      {"w_deg_s", number_or_null},
      {"battery_v", number_or_null},
      {"ranges", ranges_schema(geometry)},
      {"bumped", {{"type", "array"}, {"items", {{"type", "string"}}}}},
  };
  for (const auto& [key, value] : properties.items()) all[key] = value;
  return {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
          {"title", "flockbridge " + std::string(family) + " sensor message"},
          {"type", "object"},
          {"properties", std::move(all)},
          {"required", {"type", "seq", "ts", "pose"}}};
}

std::string upgraded_sensor_message(std::string text) {
  if (text.find(R"("ranges":[)") == std::string::npos) return text;
  const bool line_end = !text.empty() && text.back() == '\n';
  ordered message = ordered::parse(text, nullptr, false);
  if (!message.is_object()) return text;
  const auto ranges = message.find("ranges");
  if (ranges == message.end() || !ranges->is_array()) return text;
  ordered lean = ordered::object();
  for (const ordered& r : *ranges) {
    if (!r.is_object() || !r.contains("name") || !r["name"].is_string()) continue;
    lean[r["name"].get<std::string>()] = r.value("mm", ordered(nullptr));
  }
  *ranges = std::move(lean);
  text = message.dump(-1, ' ', false, ordered::error_handler_t::replace);
  if (line_end) text += '\n';
  return text;
}

ordered upgraded_sensor_properties(ordered properties) {
  if (properties.is_object()) properties.erase("ranges");
  return properties;
}

ParsedLine parse_line(std::string_view line) {
  if (nests_deeper_than(line)) {
    return {nullptr, Error{nesting_error() + "; a command needs no more than four"}, {}};
  }
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
  if (cmd == "record_start") return ClientRequest{StartRecording{}};
  if (cmd == "record_stop") return ClientRequest{StopRecording{}};
  if (cmd == "fleet_emergency" || cmd == "fleet_clear") return parse_fleet_command(object, cmd);
  return std::nullopt;
}

}  // namespace flockbridge::protocol::json
