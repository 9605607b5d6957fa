#include "flockbridge/bridge/replay/driver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <utility>

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/protocol/json_depth.hpp"

namespace flockbridge::bridge::replay {
namespace {

/// A recorded message as the core sends it on: the JSON the clients got
/// then, and what the family's own programs got (either may be missing).
class ReplayMessage final : public RobotMessage {
 public:
  ReplayMessage(bool sensor, SharedBuffer json, SharedBuffer native)
      : sensor_(sensor), json_(std::move(json)), native_(std::move(native)) {}
  [[nodiscard]] bool is_sensor() const noexcept override { return sensor_; }
  /// As recorded, numbers and times included: a replay gives what the run gave.
  [[nodiscard]] SharedBuffer encode(Encoding encoding, std::uint64_t /*seq*/, double /*unix_seconds*/) const override {
    return encoding == Encoding::Json ? json_ : native_;
  }
  [[nodiscard]] const SharedBuffer& native() const noexcept { return native_; }

 private:
  bool sensor_;
  SharedBuffer json_;
  SharedBuffer native_;
};

std::optional<protocol::LinkState> link_state_named(std::string_view name) {
  for (const auto state : {protocol::LinkState::Down, protocol::LinkState::Handshaking, protocol::LinkState::Up,
                           protocol::LinkState::Stale}) {
    if (protocol::link_state_name(state) == name) return state;
  }
  return std::nullopt;
}

std::optional<std::array<double, 4>> box_of(const nlohmann::json& json) {
  if (!json.is_array() || json.size() != 4) return std::nullopt;
  std::array<double, 4> box{};
  for (std::size_t i = 0; i < 4; ++i) {
    if (!json[i].is_number()) return std::nullopt;
    box.at(i) = json[i].get<double>();
  }
  return box;
}

/// The native form recorded with a JSON message: {"json":topic or null,"bytes":"hex"}.
struct NativeForm {
  std::optional<std::string> json;
  protocol::Bytes bytes;
};

std::optional<NativeForm> native_form(const std::string& data) {
  const auto json = protocol::parse_bounded_json<nlohmann::json>(data);
  if (!json.is_object() || !json.contains("bytes") || !json["bytes"].is_string()) return std::nullopt;
  auto bytes = protocol::from_hex(json["bytes"].get<std::string>());
  if (!bytes) return std::nullopt;
  NativeForm form{std::nullopt, std::move(*bytes)};
  if (json.contains("json") && json["json"].is_string()) form.json = json["json"].get<std::string>();
  return form;
}

SharedBuffer buffer_of(const protocol::Bytes& bytes) {
  return make_buffer(std::string(bytes.begin(), bytes.end()));
}

}  // namespace

ReplayDriver::ReplayDriver(uv_loop_t* loop, const Config& config, Host& host, std::unique_ptr<NativeReplay> native)
    : loop_(loop), config_(config), host_(host), native_(std::move(native)) {
  // The command line read the recording's head already (its family); a file
  // that has gone since is start()'s error.
  auto file = RecordingFile::open(config_.replay.file);
  if (!file) {
    open_error_ = file.error().message;
    return;
  }
  file_ = std::move(file).value();
  identity_ = file_->identity();
  file_name_ = std::filesystem::path(config_.replay.file).filename().string();
  description_.file = file_name_;
  description_.speed = config_.replay.speed;
  const auto hello = protocol::parse_bounded_json<nlohmann::json>(identity_.hello);
  if (hello.is_object()) {
    // The hello was written as the file began: it knows the model, when the robot had named it by then.
    if (const auto model = hello.find("model"); model != hello.end() && model->is_string() && !model->empty()) {
      identity_.model = model->get<std::string>();
    }
    if (const auto capabilities = hello.find("capabilities"); capabilities != hello.end() && capabilities->is_array()) {
      for (const auto& name : *capabilities) {
        if (name.is_string()) commands_.push_back(name.get<std::string>());
      }
    }
    if (const auto geometry = hello.find("geometry"); geometry != hello.end()) {
      geometry_ = protocol::json::geometry_from_json(*geometry);
    }
    if (const auto simulated = hello.find("simulated"); simulated != hello.end() && simulated->is_object()) {
      if (simulated->contains("room_mm")) room_ = box_of((*simulated)["room_mm"]);
      if (const auto boxes = simulated->find("boxes_mm"); boxes != simulated->end() && boxes->is_array()) {
        for (const auto& box : *boxes) {
          if (auto b = box_of(box)) boxes_.push_back(*b);
        }
      }
    }
  }
}

ReplayDriver::~ReplayDriver() {
  stop();
}

protocol::Result<protocol::Done> ReplayDriver::start() {
  if (!file_) return protocol::Error{open_error_};
  if (const int rc = timer_.init<ReplayDriver, &ReplayDriver::play>(loop_, this); rc < 0) {
    return protocol::Error{"replay: cannot make its timer: " + uv_error_text(rc)};
  }
  next_ = file_->next();
  if (!next_) {
    ended();
    return protocol::Done{};
  }
  first_time_ = next_->log_time;
  description_.recorded_at = static_cast<double>(first_time_) / 1e9;
  std::ostringstream speed;
  speed << config_.replay.speed;
  log_info("replaying " + config_.replay.file + " (a recording of " + identity_.robot + ", " + identity_.family +
           (identity_.simulated ? ", simulated" : "") + ") at " + speed.str() + " times its pace" +
           (config_.replay.wait ? ", from when the first client connects" : "") + "; commands are refused");
  if (config_.replay.wait) {
    waiting_ = true;
  } else {
    begin();
  }
  return protocol::Done{};
}

void ReplayDriver::client_arrived() {
  if (!waiting_) return;
  waiting_ = false;
  begin();
}

void ReplayDriver::begin() {
  started_ = steady_now();
  playing_ = true;
  play();
}

void ReplayDriver::stop() {
  waiting_ = false;
  playing_ = false;
  timer_.reset();
}

void ReplayDriver::play() {
  if (!playing_) return;
  const SteadyTime now = steady_now();
  while (next_) {
    const double offset_ns = static_cast<double>(next_->log_time - std::min(next_->log_time, first_time_));
    const SteadyTime due = started_ + std::chrono::duration_cast<SteadyTime::duration>(std::chrono::nanoseconds(
                                          static_cast<std::int64_t>(offset_ns / config_.replay.speed)));
    if (due > now) {
      timer_.start_at(due);
      return;
    }
    const auto late = std::chrono::duration_cast<std::chrono::microseconds>(now - due).count();
    late_max_us_ = std::max<std::uint64_t>(late_max_us_, static_cast<std::uint64_t>(late));
    RecordedMessage message = std::move(*next_);
    next_ = file_->next();
    play_one(message);
  }
  ended();
}

void ReplayDriver::play_one(const RecordedMessage& message) {
  ++played_;
  switch (message.topic) {
    case Topic::Sensor:
    case Topic::Robot: {
      // Its native form, recorded at the same time, comes next.
      SharedBuffer native;
      if (next_ && next_->topic == Topic::Native && next_->log_time == message.log_time) {
        if (auto form = native_form(next_->data); form && form->json == topic_name(message.topic)) {
          native = buffer_of(form->bytes);
          next_ = file_->next();
        }
      }
      const bool sensor = message.topic == Topic::Sensor;
      if (sensor) ++sensors_played_;
      driver_event::Published published;
      // A recording made before the JSON protocol's version 2 is played in version 2's form.
      std::string text = sensor ? protocol::json::upgraded_sensor_message(message.data + "\n") : message.data + "\n";
      published.message = std::make_shared<ReplayMessage>(sensor, make_buffer(std::move(text)), native);
      push(std::move(published));
      return;
    }
    case Topic::Native: {
      // The family's stream alone (or a form whose JSON was not recorded).
      auto form = native_form(message.data);
      if (!form) return;
      driver_event::Published published;
      published.message =
          std::make_shared<ReplayMessage>(form->json == topic_name(Topic::Sensor), nullptr, buffer_of(form->bytes));
      push(std::move(published));
      return;
    }
    case Topic::Link: {
      const auto json = protocol::parse_bounded_json<nlohmann::json>(message.data);
      if (!json.is_object() || !json.contains("state") || !json["state"].is_string()) return;
      const auto state = link_state_named(json["state"].get<std::string>());
      if (!state) return;
      const std::string reason = json.value("reason", std::string());
      link_changed(*state, reason.empty() ? "" : "in the recording: " + reason);
      return;
    }
    default:
      // The bridge's own doings then (clients, leases, commands, answers) are not the robot's.
      --played_;
      return;
  }
}

void ReplayDriver::ended() {
  playing_ = false;
  std::string why = "the replay of " + file_name_ + " has ended";
  if (!file_->error().empty()) {
    why = "the replay stopped early: " + file_->error();
  } else if (file_->cut_short()) {
    why += " (its recording was cut short: it ends at its last whole chunk)";
  }
  link_changed(protocol::LinkState::Down, why + "; " + std::to_string(sensors_played_) + " sensor messages played");
}

void ReplayDriver::link_changed(protocol::LinkState state, std::string reason) {
  link_state_ = state;
  link_reason_ = reason;
  push(driver_event::LinkChanged{state, std::move(reason)});
}

void ReplayDriver::push(DriverEvent event) {
  events_.push_back(std::move(event));
  host_.driver_has_events();
}

std::optional<DriverEvent> ReplayDriver::next_event() {
  if (events_.empty()) return std::nullopt;
  DriverEvent event = std::move(events_.front());
  events_.pop_front();
  if (const auto* published = std::get_if<driver_event::Published>(&event); published != nullptr && native_) {
    // The family's programs get it now: where a new one starts.
    const auto& message = static_cast<const ReplayMessage&>(*published->message);
    if (message.native()) native_->follow(*message.native());
  }
  return event;
}

std::unique_ptr<NativeClient> ReplayDriver::make_native_client() {
  return native_ ? native_->make_native_client() : nullptr;
}

std::size_t ReplayDriver::native_client_limit() const noexcept {
  return native_ ? native_->native_client_limit() : 0;
}

protocol::Error ReplayDriver::refusal() const {
  return protocol::Error{"not sent: this bridge replays a recording (" + file_name_ + "); there is no robot to move",
                         protocol::ErrorCode::Replay, "not sent: a replay of a recording"};
}

protocol::Result<protocol::Bytes> ReplayDriver::command_from_json(std::string_view cmd,
                                                                  const nlohmann::json& /*object*/) const {
  // A recording never moves: it has stopped already.
  if (cmd == "stop" || cmd == "emergency") return protocol::Bytes{};
  if (std::find(commands_.begin(), commands_.end(), cmd) == commands_.end()) {
    return protocol::Error{"unknown command '" + std::string(cmd) + "'"};
  }
  return refusal();
}

MotionEffect ReplayDriver::motion_effect(protocol::ByteView command) const {
  return command.empty() ? MotionEffect{.stops = true} : MotionEffect{};
}

protocol::Result<protocol::Done> ReplayDriver::submit(protocol::CommandToken token, protocol::ByteView command) {
  if (!command.empty()) return refusal();
  return stop_robot(token);
}

protocol::Result<protocol::Done> ReplayDriver::reset_pose(protocol::CommandToken /*token*/) {
  return refusal();
}

protocol::Result<protocol::Done> ReplayDriver::stop_robot(protocol::CommandToken token) {
  driver_event::CommandDone done;
  done.token = token;
  push(std::move(done));
  return protocol::Done{};
}

nlohmann::ordered_json ReplayDriver::sensor_properties() const {
  const auto schema = protocol::parse_bounded_json<nlohmann::ordered_json>(identity_.sensor_schema);
  if (schema.is_object() && schema.contains("properties") && schema["properties"].is_object()) {
    return protocol::json::upgraded_sensor_properties(schema["properties"]);
  }
  return nlohmann::ordered_json::object();
}

void ReplayDriver::add_stats(protocol::StatsSnapshot& snapshot) const {
  snapshot.link_state = link_state_;
  snapshot.link_counters = {{"replayed", played_}, {"replayed_sensor", sensors_played_}, {"late_max_us", late_max_us_}};
  snapshot.link_summary = "replay of " + file_name_ + (waiting_ ? ", waiting for its first client" : "") + ": " +
                          std::to_string(played_) + " messages played (" + std::to_string(sensors_played_) +
                          " sensor), the latest " + std::to_string(late_max_us_) + " us after its time";
}

}  // namespace flockbridge::bridge::replay
