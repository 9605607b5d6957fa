#include "flockbridge/bridge/fleet.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/protocol/json_depth.hpp"

namespace flockbridge::bridge {
namespace {

using protocol::Done;
using protocol::Error;
using protocol::Result;

constexpr std::size_t kReasonLimit = 200;
/// The most robots a hub follows: a broker that tells of more is not one class's.
constexpr std::size_t kMemberLimit = 1000;

/// Unix seconds to the millisecond: enough for the fleet, and shorter.
double unix_seconds_ms() {
  return std::round(unix_seconds_now() * 1000) / 1000;
}

/// Text from the network, fit for a log line: no control characters, not too long.
std::string printable(std::string text) {
  text = text.substr(0, kReasonLimit);
  std::ranges::replace_if(
      text, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; }, ' ');
  return text;
}

/// "fb-1, lab-2".
std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

/// "14:03:27", local time, for log lines and messages.
std::string clock_time(double unix_seconds) {
  const auto seconds = static_cast<std::time_t>(unix_seconds);
  std::tm local{};
  localtime_r(&seconds, &local);
  std::array<char, 16> text{};
  std::strftime(text.data(), text.size(), "%H:%M:%S", &local);
  return text.data();
}

}  // namespace

Result<std::string> read_password(const std::string& path) {
  std::ifstream file(path);
  if (!file) return Error{"mqtt: cannot read the password file " + path + " (mqtt.password_file)"};
  std::string password;
  std::getline(file, password);
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (password.empty()) return Error{"mqtt: the password file " + path + " is empty (mqtt.password_file)"};
  return password;
}

std::string default_robot_name() {
  std::array<char, 256> host{};
  std::size_t size = host.size();
  std::string name;
  if (uv_os_gethostname(host.data(), &size) == 0) name.assign(host.data(), size);
  name = name.substr(0, name.find('.'));
  std::ranges::transform(name, name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::erase_if(name, [](char c) { return c == '/' || c == '+' || c == '#' || c <= 0x20 || c >= 0x7F; });
  while (!name.empty() && (name[0] == '_' || name[0] == '$')) name.erase(0, 1);
  return name.empty() ? "robot" : name;
}

Fleet::Fleet(uv_loop_t* loop, Host& host) : loop_(loop), host_(host) {}

Fleet::~Fleet() {
  stop();
}

std::string Fleet::topic(std::string_view leaf) const {
  return prefix_ + "/" + robot_ + "/" + std::string(leaf);
}

Result<Done> Fleet::start(const Config& config, bool has_robot) {
  const FleetMqttSettings& mqtt = config.mqtt;
  if (!mqtt.enabled) return Done{};
  announce_ = has_robot;
  hub_ = config.fleet_hub;
  prefix_ = mqtt.topic_prefix;
  robot_ = mqtt.robot_name.empty() ? default_robot_name() : mqtt.robot_name;
  fleet_commands_ = prefix_ + "/_fleet/cmd/";
  robot_commands_ = topic("cmd/");
  telemetry_hz_ = mqtt.telemetry_hz;

  MqttSettings settings;
  settings.host = mqtt.host;
  settings.port = mqtt.port;
  settings.client_id = robot_;
  settings.keepalive = mqtt.keepalive;
  settings.reconnect_max = mqtt.reconnect_max;
  settings.queue_limit = mqtt.queue_limit;
  if (!mqtt.password_file.empty()) {
    auto password = read_password(mqtt.password_file);
    if (!password) return password.error();
    settings.password = std::move(password.value());
    settings.username = mqtt.username.empty() ? robot_ : mqtt.username;
  } else {
    settings.username = mqtt.username;
  }
  if (announce_) {
    settings.will = MqttMessage{topic("status"), status_payload(false, "the bridge's connection was lost"), true, 1};
    settings.subscriptions = {fleet_commands_ + "#", robot_commands_ + "#"};
  }
  if (hub_) {
    for (const char* leaf : {"status", "telemetry", "events"}) settings.subscriptions.push_back(prefix_ + "/+/" + leaf);
  }

  client_.emplace(loop_, *this);
  if (auto started = client_->start(std::move(settings)); !started) {
    client_.reset();
    return started.error();
  }
  if (telemetry_timer_.init(this, [this](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0) {
    return Error{"mqtt: cannot create the loop's timers"};
  }
  const std::string user = client_->user().empty() ? "no user name" : "user " + client_->user();
  if (announce_) {
    arm_telemetry_timer();
    log_info("mqtt: this robot is " + robot_ + " on " + client_->broker() + ", as " + user + " (topics " + topic("#") +
             ")");
  }
  if (hub_) {
    log_info("mqtt: the class hub, following " + prefix_ + "/+/ on " + client_->broker() + " as " + user +
             " (client id " + robot_ + ")");
  }
  return Done{};
}

void Fleet::stop() {
  telemetry_timer_.reset();
  if (!client_) return;
  std::optional<MqttMessage> last;
  if (announce_) last = MqttMessage{topic("status"), status_payload(false, "the bridge stopped"), true, 1};
  client_->stop(last);
  client_.reset();
}

void Fleet::reload(const Config& config) {
  if (!client_ || config.mqtt.telemetry_hz == telemetry_hz_) return;
  telemetry_hz_ = config.mqtt.telemetry_hz;
  arm_telemetry_timer();
}

void Fleet::arm_telemetry_timer() {
  const auto every = static_cast<std::uint64_t>(std::max(100.0, std::round(1000.0 / telemetry_hz_)));
  uv_timer_start(
      telemetry_timer_.get(),
      [](uv_timer_t* timer) {
        if (auto* self = owner_of<Fleet>(timer)) self->publish_telemetry();
      },
      every, every);
}

std::string Fleet::status_payload(bool online, std::string_view reason) const {
  nlohmann::ordered_json status{{"state", online ? "online" : "offline"}, {"robot", robot_}};
  if (online) {
    const nlohmann::ordered_json robot = host_.fleet_status();
    for (const auto& [key, value] : robot.items()) status[key] = value;
  } else {
    status["reason"] = reason;
  }
  status["ts"] = unix_seconds_ms();
  return status.dump();
}

void Fleet::status_changed() {
  if (client_ && announce_) publish_status();
}

void Fleet::publish_status() {
  client_->publish(MqttMessage{topic("status"), status_payload(true, {}), true, 1}, true);
}

void Fleet::publish_telemetry() {
  if (!client_ || !announce_) return;
  nlohmann::ordered_json telemetry{{"robot", robot_}, {"ts", unix_seconds_ms()}};
  const nlohmann::ordered_json summary = host_.fleet_telemetry();
  for (const auto& [key, value] : summary.items()) telemetry[key] = value;
  // QoS 0: a newer one follows within the period.
  client_->publish(MqttMessage{topic("telemetry"), telemetry.dump(), true, 0}, true);
}

void Fleet::event(const nlohmann::ordered_json& event) {
  if (!client_ || !announce_) return;
  nlohmann::ordered_json message{{"robot", robot_}, {"ts", unix_seconds_ms()}};
  for (const auto& [key, value] : event.items()) message[key] = value;
  client_->publish(MqttMessage{topic("events"), message.dump(), false, 1});
}

void Fleet::mqtt_connected() {
  if (!announce_) return;
  // The will replaced whatever status was retained: say again that we are here.
  publish_status();
  publish_telemetry();
}

void Fleet::follow(const MqttMessage& message) {
  // prefix/<robot>/<leaf>
  const std::string_view rest = std::string_view(message.topic).substr(prefix_.size() + 1);
  const std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return;
  const std::string robot(rest.substr(0, slash));
  const std::string_view leaf = rest.substr(slash + 1);
  if (robot.empty() || robot[0] == '_') return;
  const auto known = members_.find(robot);
  if (message.payload.empty()) {
    // A retained status cleared by hand: the robot has left the class.
    if (leaf == "status" && known != members_.end()) {
      members_.erase(known);
      host_.fleet_changed();
    }
    return;
  }
  nlohmann::json payload = protocol::parse_bounded_json<nlohmann::json>(message.payload);
  if (!payload.is_object()) return;
  if (known == members_.end() && members_.size() >= kMemberLimit) {
    log_warning("mqtt: the hub follows " + std::to_string(kMemberLimit) + " robots already; ignored " + robot);
    return;
  }
  Member& member = members_[robot];
  if (leaf == "status") {
    if (payload.value("state", "") == "online" && pending_stops_.contains(robot)) {
      // Said once its subscriptions were in place: it hears what goes now.
      deliver_pending_stop(robot);
    }
    // An offline status (the will) says little: the page still shows what the robot was.
    if (member.status.is_object()) {
      for (const char* key : {"family", "model"}) {
        if (!payload.contains(key) && member.status.contains(key)) payload[key] = member.status[key];
      }
    }
    member.status = std::move(payload);
  } else if (leaf == "telemetry") {
    member.telemetry = std::move(payload);
  } else if (leaf == "events") {
    member.event = std::move(payload);
  } else {
    return;
  }
  member.seen = unix_seconds_ms();
  host_.fleet_changed();
}

bool Fleet::Member::online() const {
  return status.is_object() && status.value("state", "") == "online";
}

nlohmann::ordered_json Fleet::robots() const {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& [name, member] : members_) {
    nlohmann::ordered_json entry{{"robot", name}, {"online", member.online()}};
    // Since when it is in that state, as the robot said (the will carries the time it was set).
    entry["since"] = member.status.is_object() && member.status.contains("ts") ? member.status["ts"] : nullptr;
    entry["seen"] = member.seen;
    entry["status"] = member.status.is_object() ? member.status : nlohmann::json(nullptr);
    entry["telemetry"] = member.telemetry.is_object() ? member.telemetry : nlohmann::json(nullptr);
    entry["event"] = member.event.is_object() ? member.event : nlohmann::json(nullptr);
    const auto pending = pending_stops_.find(name);
    entry["pending"] = pending == pending_stops_.end() ? nlohmann::ordered_json(nullptr)
                                                       : nlohmann::ordered_json{{"command", pending->second.command},
                                                                                {"by", pending->second.by},
                                                                                {"since", pending->second.since}};
    list.push_back(std::move(entry));
  }
  return list;
}

void Fleet::publish_command(const std::string& robot, std::string_view leaf, const std::string& by,
                            const std::string& reason) {
  const std::string target = (robot.empty() ? fleet_commands_ : prefix_ + "/" + robot + "/cmd/") + std::string(leaf);
  const nlohmann::ordered_json payload{{"by", by}, {"reason", reason}};
  client_->publish(MqttMessage{target, payload.dump(), false, 1});
}

Result<Fleet::Sent> Fleet::publish_emergency(const std::string& robot, const std::string& by) {
  return send_from_hub(robot, "emergency", by);
}

Result<Fleet::Sent> Fleet::publish_clear(const std::string& robot, const std::string& by) {
  return send_from_hub(robot, "clear", by);
}

Result<Fleet::Sent> Fleet::send_from_hub(const std::string& robot, std::string_view command, const std::string& by) {
  if (!client_) return Error{"this bridge is not on the fleet's broker (mqtt.enabled)"};
  const bool stop = command == "emergency";
  const std::string what = stop ? "stop" : "clear";
  if (!client_->connected()) {
    return Error{"the fleet's broker cannot be reached now (" + client_->broker() + "): the " + what + " was not sent",
                 protocol::ErrorCode::LinkDown};
  }
  if (!robot.empty() && !members_.contains(robot)) {
    return Error{"there is no robot '" + robot + "' in the fleet", protocol::ErrorCode::Invalid};
  }
  const std::string reason = stop ? (robot.empty() ? "stop all, from the class hub" : "stop, from the class hub")
                                  : (robot.empty() ? "clear all, from the class hub" : "clear, from the class hub");
  publish_command(robot, command, by, reason);
  // A robot that is offline hears nothing now: what the teacher meant for
  // it waits here, the latest only, and goes out when it is back.
  Sent sent;
  const double now = unix_seconds_ms();
  for (const auto& [name, member] : members_) {
    if ((!robot.empty() && name != robot) || member.online()) continue;
    sent.offline.push_back(name);
    pending_stops_[name] = PendingStop{std::string(command), by, reason, now};
  }
  log_warning("mqtt: " + by + " sent the " + (stop ? "emergency stop" : "clearing of the emergency stop") + " to " +
              (robot.empty() ? "the whole fleet" : robot) +
              (sent.offline.empty() ? "" : "; it waits for the robots that are offline: " + joined(sent.offline)));
  host_.fleet_changed();
  return sent;
}

void Fleet::deliver_pending_stop(const std::string& robot) {
  const auto pending = pending_stops_.find(robot);
  if (pending == pending_stops_.end()) return;
  const PendingStop waiting = std::move(pending->second);
  pending_stops_.erase(pending);
  publish_command(robot, waiting.command, waiting.by,
                  waiting.reason + " at " + clock_time(waiting.since) + ", while the robot was offline");
  log_warning("mqtt: " + robot + " is back: it gets the " +
              (waiting.command == "emergency" ? "emergency stop" : "clearing") + " that waited for it");
}

void Fleet::mqtt_message(const MqttMessage& message) {
  const bool fleet_wide = message.topic.starts_with(fleet_commands_);
  if (fleet_wide || message.topic.starts_with(robot_commands_)) {
    if (announce_) {
      command(message, std::string_view(message.topic).substr((fleet_wide ? fleet_commands_ : robot_commands_).size()),
              fleet_wide);
    }
    return;
  }
  if (hub_ && message.topic.starts_with(prefix_ + "/")) follow(message);
}

void Fleet::command(const MqttMessage& message, std::string_view leaf, bool fleet_wide) {
  const auto read = read_fleet_command(message.payload, message.retain);
  if (const auto* ignored = std::get_if<IgnoredCommand>(&read)) {
    const std::string line = "mqtt: ignored the message on " + message.topic + ": " + ignored->why;
    if (ignored->quiet) {
      warned_retained_.erase(message.topic);  // a retained command deleted: warn of the next one
      log_debug(line);
    } else if (message.retain && !warned_retained_.insert(message.topic).second) {
      log_debug(line);  // said once already, at a warning's level
    } else {
      log_warning(line);
    }
    return;
  }
  const FleetCommand& obeyed = std::get<FleetCommand>(read);
  const std::string by =
      std::string(fleet_wide ? "the fleet" : "MQTT") + (obeyed.by.empty() ? "" : " (" + obeyed.by + ")");
  const std::string said = " from " + by + " on " + message.topic + (obeyed.reason.empty() ? "" : ": " + obeyed.reason);
  if (leaf == "emergency") {
    log_warning("mqtt: emergency stop" + said);
    host_.fleet_emergency(by, obeyed.reason);
  } else if (leaf == "clear") {
    log_warning("mqtt: clearing of the emergency stop" + said);
    host_.fleet_clear(by, obeyed.reason);
  } else {
    log_warning("mqtt: ignored " + message.topic + ": the commands are emergency and clear");
  }
}

std::variant<FleetCommand, IgnoredCommand> read_fleet_command(std::string_view payload, bool retained) {
  if (payload.empty()) {
    return IgnoredCommand{"it is empty (how MQTT deletes a retained message); nothing to do", true};
  }
  if (retained) {
    return IgnoredCommand{
        "it was retained by the broker, and a command must not be: it would act again at every connection, long "
        "after it was meant. Delete it with: mosquitto_pub -r -n -t <topic>"};
  }
  const nlohmann::json body = protocol::parse_bounded_json<nlohmann::json>(payload);
  if (!body.is_object()) {
    return IgnoredCommand{R"(a command is a JSON object: {} or {"by":"who","reason":"why"})"};
  }
  FleetCommand command;
  for (const auto& [key, text] : {std::pair{"by", &command.by}, std::pair{"reason", &command.reason}}) {
    const auto found = body.find(key);
    if (found == body.end()) continue;
    if (!found->is_string()) return IgnoredCommand{std::string("\"") + key + "\" must be text"};
    *text = printable(found->get<std::string>());
  }
  return command;
}

}  // namespace flockbridge::bridge
