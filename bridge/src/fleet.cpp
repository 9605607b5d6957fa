#include "flockbridge/bridge/fleet.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <fstream>

#include "flockbridge/bridge/log.hpp"

namespace flockbridge::bridge {
namespace {

using protocol::Done;
using protocol::Error;
using protocol::Result;

constexpr std::size_t kReasonLimit = 200;

double unix_seconds_now() {
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return std::round(now * 1000) / 1000;
}

/// Text from the network, fit for a log line: no control characters, not too long.
std::string printable(std::string text) {
  text = text.substr(0, kReasonLimit);
  std::ranges::replace_if(
      text, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; }, ' ');
  return text;
}

Result<std::string> read_password(const std::string& path) {
  std::ifstream file(path);
  if (!file) return Error{"mqtt: cannot read the password file " + path + " (mqtt.password_file)"};
  std::string password;
  std::getline(file, password);
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (password.empty()) return Error{"mqtt: the password file " + path + " is empty (mqtt.password_file)"};
  return password;
}

}  // namespace

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

Result<Done> Fleet::start(const Config& config) {
  const MqttConfig& mqtt = config.mqtt;
  if (!mqtt.enabled) return Done{};
  prefix_ = mqtt.topic_prefix;
  robot_ = mqtt.robot_name.empty() ? default_robot_name() : mqtt.robot_name;
  fleet_emergency_topic_ = prefix_ + "/_fleet/cmd/emergency";
  robot_emergency_topic_ = topic("cmd/emergency");
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
  settings.will = MqttMessage{topic("status"), status_payload(false, "the bridge's connection was lost"), true, 1};
  settings.subscriptions = {fleet_emergency_topic_, robot_emergency_topic_};

  client_.emplace(loop_, *this);
  if (auto started = client_->start(std::move(settings)); !started) {
    client_.reset();
    return started.error();
  }
  if (telemetry_timer_.init(this, [this](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0) {
    return Error{"mqtt: cannot create the loop's timers"};
  }
  arm_telemetry_timer();
  log_info("mqtt: this robot is " + robot_ + " on " + client_->broker() + " (topics " + topic("#") + ")");
  return Done{};
}

void Fleet::stop() {
  telemetry_timer_.reset();
  if (!client_) return;
  client_->stop(MqttMessage{topic("status"), status_payload(false, "the bridge stopped"), true, 1});
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
  status["ts"] = unix_seconds_now();
  return status.dump();
}

void Fleet::status_changed() {
  if (client_) publish_status();
}

void Fleet::publish_status() {
  client_->publish(MqttMessage{topic("status"), status_payload(true, {}), true, 1}, true);
}

void Fleet::publish_telemetry() {
  if (!client_) return;
  nlohmann::ordered_json telemetry{{"robot", robot_}, {"ts", unix_seconds_now()}};
  const nlohmann::ordered_json summary = host_.fleet_telemetry();
  for (const auto& [key, value] : summary.items()) telemetry[key] = value;
  // QoS 0: a newer one follows within the period.
  client_->publish(MqttMessage{topic("telemetry"), telemetry.dump(), true, 0}, true);
}

void Fleet::event(const nlohmann::ordered_json& event) {
  if (!client_) return;
  nlohmann::ordered_json message{{"robot", robot_}, {"ts", unix_seconds_now()}};
  for (const auto& [key, value] : event.items()) message[key] = value;
  client_->publish(MqttMessage{topic("events"), message.dump(), false, 1});
}

void Fleet::mqtt_connected() {
  // The will replaced whatever status was retained: say again that we are here.
  publish_status();
  publish_telemetry();
}

void Fleet::mqtt_message(const MqttMessage& message) {
  if (message.topic != fleet_emergency_topic_ && message.topic != robot_emergency_topic_) return;
  if (message.retain) {
    // A command kept by the broker would stop the robot at every connection, long after it was meant.
    log_warning("mqtt: ignored a retained emergency stop on " + message.topic +
                " (commands must not be retained; clear it with: mosquitto_pub -r -n -t '" + message.topic + "')");
    return;
  }
  std::string by = message.topic == fleet_emergency_topic_ ? "the fleet" : "MQTT";
  std::string reason;
  const nlohmann::json body = nlohmann::json::parse(message.payload, nullptr, false);
  if (body.is_object()) {
    if (const auto who = body.find("by"); who != body.end() && who->is_string()) {
      by += " (" + printable(who->get<std::string>()) + ")";
    }
    if (const auto why = body.find("reason"); why != body.end() && why->is_string()) reason = why->get<std::string>();
  } else if (!message.payload.empty()) {
    reason = message.payload;
  }
  reason = printable(std::move(reason));
  log_warning("mqtt: emergency stop from " + by + " on " + message.topic + (reason.empty() ? "" : ": " + reason));
  host_.fleet_emergency(by, reason);
}

}  // namespace flockbridge::bridge
