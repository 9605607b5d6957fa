#include "flockbridge/bridge/pioneer/driver.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/pioneer/aria_client.hpp"
#include "flockbridge/bridge/pioneer/messages.hpp"
#include "flockbridge/protocol/json_arguments.hpp"

namespace flockbridge::bridge::pioneer {
namespace {

namespace codec = protocol::pioneer;

bool is_motion(protocol::Byte number) {
  using namespace codec::command;
  return number == kVel || number == kRVel || number == kVel2 || number == kRotate || number == kMove ||
         number == kHead || number == kDHead || number == kDCHead;
}

}  // namespace

PioneerDriver::Axes PioneerDriver::Axes::after(const codec::Command& command) const noexcept {
  // A velocity goes on until another command ends it; a move to a distance
  // or a heading ends by itself. AROS keeps the two axes apart: RVEL 0
  // leaves a VEL in force.
  using namespace codec::command;
  const int* value = std::get_if<int>(&command.argument);
  const bool nonzero = value != nullptr && *value != 0;
  Axes next = *this;
  switch (command.number) {
    case kStop:
    case kEStop:
      return Axes{};
    case kVel:
      next.translating = nonzero;
      break;
    case kMove:
      next.translating = false;
      break;
    case kRVel:
    case kRotate:
      next.rotating = nonzero;
      break;
    case kHead:
    case kDHead:
    case kDCHead:
      next.rotating = false;
      break;
    case kVel2:
      next.translating = nonzero;
      next.rotating = nonzero;
      break;
    default:
      break;
  }
  return next;
}

namespace {

codec::LinkSettings link_settings(const Config&) {
  return codec::LinkSettings{};
}

}  // namespace

PioneerDriver::PioneerDriver(uv_loop_t* loop, const Config& config, Host& host)
    : LinkDriver(loop, config, host, link_settings(config)) {
  model_chosen();
}

void PioneerDriver::model_chosen() {
  geometry_ = std::make_shared<protocol::json::RobotStateEncoder>(codec::robot_geometry(model_));
  sonar_mm_.assign(model_ != nullptr ? model_->sonar.size() : 0, std::nullopt);
}

PioneerDriver::~PioneerDriver() {
  stop();
}

std::string model_names() {
  std::string models;
  for (const codec::RobotModel& row : codec::robot_models())
    models += (models.empty() ? "" : ", ") + std::string(row.subclass);
  return models;
}

std::string_view PioneerDriver::model() const noexcept {
  if (model_ != nullptr) return model_->subclass;
  if (!config_.model.empty()) return config_.model;
  if (const auto& identity = link_.identity()) return identity->subtype;
  return {};
}

protocol::Result<protocol::Done> PioneerDriver::start() {
  if (!config_.model.empty()) {
    model_ = codec::find_robot_model(config_.model);
    if (model_ == nullptr) {
      return protocol::Error{"robot.model: there is no Pioneer model '" + config_.model + "'; the models are " +
                             model_names()};
    }
    model_chosen();
  }
  const std::string model = config_.model.empty() ? "p3dx-sh" : config_.model;
  return start_link({"--robot", "pioneer", "--model", model}, "simulated Pioneer");
}

protocol::Bytes PioneerDriver::last_words() {
  return link_.shutdown_packets();
}

std::unique_ptr<NativeClient> PioneerDriver::make_native_client() {
  return std::make_unique<AriaClient>(link_);
}

protocol::Result<protocol::Bytes> PioneerDriver::command_from_json(std::string_view cmd,
                                                                   const nlohmann::json& object) const {
  return protocol::pioneer::command_packets(cmd, object, model_);
}

MotionEffect PioneerDriver::motion_effect(protocol::ByteView command) const {
  MotionEffect effect;
  auto commands = protocol::pioneer::split_commands(command);
  if (!commands) return effect;
  Axes axes = axes_;
  for (const codec::Command& c : commands.value()) {
    if (c.number == codec::command::kStop || c.number == codec::command::kEStop) {
      // Not an emergency to latch: ARIA's limiter actions send ESTOP as a
      // sharp stop before an obstacle, and drive on afterwards.
      effect = MotionEffect{.stops = true};
    } else if (is_motion(c.number)) {
      effect.stops = false;
      effect.motion = true;
    }
    axes = axes.after(c);
  }
  effect.keeps_moving = effect.motion && axes.moving();
  return effect;
}

protocol::Result<protocol::Done> PioneerDriver::submit(protocol::CommandToken token, protocol::ByteView command) {
  auto commands = protocol::pioneer::split_commands(command);
  if (!commands) return commands.error();
  for (const codec::Command& c : commands.value()) {
    if (auto fits = codec::check_command(c); !fits) return fits.error();
  }
  // Every part goes under the client's token; the command is done when the
  // last part is. The link may finish a part inside submit().
  const std::size_t count = commands.value().size();
  parts_[token] = Parts{count, std::nullopt};
  const SteadyTime now = steady_now();
  for (std::size_t i = 0; i < count; ++i) {
    auto queued = link_.submit(token, commands.value()[i], now);
    if (queued) {
      axes_ = axes_.after(commands.value()[i]);
      continue;
    }
    if (i == 0) {
      parts_.erase(token);
      arm_link_timer();
      return queued.error();
    }
    // The parts already sent cannot be taken back: the command is done,
    // with this error, once they are.
    Parts& parts = parts_[token];
    parts.error = queued.error();
    parts.remaining -= count - i;
    if (parts.remaining == 0) finish_command(token);
    break;
  }
  arm_link_timer();
  return protocol::Done{};
}

protocol::Result<protocol::Done> PioneerDriver::reset_pose(protocol::CommandToken token) {
  // The robot keeps the pose (ARIA programs read it too): SETO starts it
  // again, and the bridge's count follows it from the next SIP.
  return submit(token, codec::encode_command(codec::Command{codec::command::kSetO, codec::NoArgument{}}));
}

protocol::Result<protocol::Done> PioneerDriver::stop_robot(protocol::CommandToken token) {
  return submit(token, codec::encode_command(codec::Command{codec::command::kStop, codec::NoArgument{}}));
}

void PioneerDriver::add_stats(protocol::StatsSnapshot& snapshot) const {
  const codec::LinkStats stats = link_.stats();
  snapshot.link_state = link_.state();
  snapshot.link_counters = codec::link_counters(stats);
  snapshot.commands = protocol::unacknowledged_commands(stats.commands_sent, stats.commands_failed);
  snapshot.link_summary = "packets in " + std::to_string(stats.decoder.packets) + " out " +
                          std::to_string(stats.packets_sent) + ", bad checksum " +
                          std::to_string(stats.decoder.bad_checksum) + ", SIPs " + std::to_string(stats.sips) +
                          " (bad " + std::to_string(stats.bad_sips) + "), connects " + std::to_string(stats.connects);
}

void PioneerDriver::reload(const Config& config) {
  config_ = config;
  link_.set_settings(link_settings(config_));
  arm_link_timer();
}

void PioneerDriver::choose_model() {
  if (!config_.model.empty()) return;  // chosen at start
  const auto& identity = link_.identity();
  if (!identity) return;
  const codec::RobotModel* named = codec::find_robot_model(identity->subtype);
  if (named == model_) return;
  model_ = named;
  pose_.reset();
  model_chosen();
  if (named == nullptr) {
    log_warning("the robot names its model '" + identity->subtype +
                "', which the bridge has no factors for: sensor messages carry raw values only; "
                "set robot.model (--model) to the nearest model");
  } else {
    log_info("the robot is a " + identity->type + " " + identity->subtype + " called '" + identity->name + "'");
  }
}

void PioneerDriver::link_changed(protocol::LinkState state, std::string_view reason) {
  // A robot being synchronised has just been opened: it stands.
  if (state != protocol::LinkState::Up) axes_ = Axes{};
  if (state == protocol::LinkState::Up) {
    choose_model();
    if (pose_) pose_->reset();
  }
  push(driver_event::LinkChanged{state, std::string(reason)});
}

void PioneerDriver::sip_received(const codec::StandardSip& sip, protocol::Byte type, protocol::ByteView payload) {
  SipSnapshot snapshot;
  snapshot.sip = sip;
  snapshot.packet = codec::encode_packet(type, payload);
  if (model_ != nullptr) {
    if (!pose_) pose_.emplace(*model_);
    snapshot.pose = pose_->update(sip);
    snapshot.reading = codec::convert_sip(sip, *model_);
    const codec::SipReading& r = *snapshot.reading;
    snapshot.state.pose = protocol::Pose{snapshot.pose.x_mm, snapshot.pose.y_mm, snapshot.pose.th_deg};
    snapshot.state.v_mm_s = r.velocity_mm_s;
    snapshot.state.w_deg_s = r.rotational_velocity_deg_s;
    snapshot.state.battery_v = protocol::json_arguments::tenths(r.battery_v);  // tenths of a volt, as the SIP has them
    for (const auto& range : r.sonar) {
      if (range.sonar < 0 || static_cast<std::size_t>(range.sonar) >= sonar_mm_.size()) continue;
      sonar_mm_[static_cast<std::size_t>(range.sonar)] =
          range.range_mm < codec::kSonarMaxMm ? std::optional<double>(range.range_mm) : std::nullopt;
    }
    // FLAGS bits 1-4: the sonar arrays that are on. All off: no echoes
    // come, and the last ones are not kept as if they were seen now.
    if ((sip.flags & 0x001E) == 0) std::fill(sonar_mm_.begin(), sonar_mm_.end(), std::nullopt);
    snapshot.state.ranges_mm = sonar_mm_;
  }
  snapshot.state.bumped = codec::bumped(sip);
  snapshot.model = geometry_;
  driver_event::Published published;
  published.message = std::make_shared<SipMessage>(std::move(snapshot));
  push(std::move(published));
}

void PioneerDriver::packet_received(protocol::Byte type, protocol::ByteView payload) {
  push(driver_event::Note{"robot packet of type " + std::to_string(type) + ", " + std::to_string(payload.size()) +
                          " bytes"});
}

void PioneerDriver::command_finished(protocol::CommandToken token, const protocol::Error* error) {
  const auto found = parts_.find(token);
  if (found == parts_.end()) return;
  Parts& parts = found->second;
  if (error != nullptr && !parts.error) parts.error = *error;
  if (--parts.remaining == 0) finish_command(token);
}

void PioneerDriver::finish_command(protocol::CommandToken token) {
  const auto found = parts_.find(token);
  if (found == parts_.end()) return;
  driver_event::CommandDone done;
  done.token = token;
  done.error = found->second.error;
  parts_.erase(found);
  push(std::move(done));
}

}  // namespace flockbridge::bridge::pioneer
