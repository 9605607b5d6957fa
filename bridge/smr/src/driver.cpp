#include "flockbridge/bridge/smr/driver.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/smr/messages.hpp"
#include "flockbridge/bridge/smr/smrd_client.hpp"
#include "flockbridge/protocol/smr/robot_model.hpp"

namespace flockbridge::bridge::smr {
namespace {

namespace bus = protocol::smr;

bus::LinkSettings link_settings(const Config& config) {
  bus::LinkSettings settings;
  settings.period = settings_of(config).period;
  settings.module_loss_periods = settings_of(config).module_loss_periods;
  settings.bus_loss_periods = settings_of(config).bus_loss_periods;
  return settings;
}

bus::Geometry wheel_geometry(const Config& config) {
  bus::Geometry g;
  g.wheel_diameter_m = settings_of(config).wheel_diameter_m;
  g.wheel_base_m = settings_of(config).wheel_base_m;
  g.positions_per_turn = settings_of(config).positions_per_turn;
  g.period_s = std::chrono::duration<double>(settings_of(config).period).count();
  return g;
}

/// Both motors to 0, and nothing else.
bool is_stop(const std::vector<bus::SpeedCommand>& speeds) {
  const auto has = [&](protocol::Byte module) {
    return std::any_of(speeds.begin(), speeds.end(), [&](const auto& s) { return s.module == module; });
  };
  return has(bus::module::kLeftSpeed) && has(bus::module::kRightSpeed) &&
         std::all_of(speeds.begin(), speeds.end(), [](const auto& s) { return s.speed == 0; });
}

}  // namespace

SmrDriver::SmrDriver(uv_loop_t* loop, const Config& config, Host& host)
    : LinkDriver(loop, config, host, link_settings(config)),
      geometry_(wheel_geometry(config)),
      odometry_(geometry_),
      hold_(settings_of(config).module_loss_periods) {
  model_chosen();
}

void SmrDriver::model_chosen() {
  ir_range_ = model_ir_range(config_);
  model_ = std::make_shared<protocol::json::RobotStateEncoder>(bus::robot_geometry(geometry_, ir_range_));
}

protocol::Result<protocol::Done> SmrDriver::reset_pose(protocol::CommandToken token) {
  // The SMR has no pose of its own: the bridge's count of the encoders starts again.
  odometry_.reset();
  last_ts_.reset();
  command_finished(token, nullptr);
  return protocol::Done{};
}

SmrDriver::~SmrDriver() {
  stop();
}

std::span<const std::string> SmrDriver::commands() const noexcept {
  return protocol::smr::json_commands();
}

protocol::Result<protocol::Done> SmrDriver::start() {
  return start_link({"--robot", "smr"}, "simulated SMR");
}

protocol::Bytes SmrDriver::last_words() {
  return link_.shutdown_bytes();
}

std::optional<DriverEvent> SmrDriver::next_event() {
  auto event = LinkDriver::next_event();
  if (const auto* published = event ? std::get_if<driver_event::Published>(&*event) : nullptr) {
    if (const auto* stream = dynamic_cast<const StreamMessage*>(published->message.get())) {
      delivered_.follow(stream->bytes());
    }
  }
  return event;
}

std::unique_ptr<NativeReplay> native_replay(const Config& config) {
  class Replay final : public NativeReplay {
   public:
    explicit Replay(std::size_t limit) : limit_(limit) {}
    void follow(std::string_view native) override { delivered_.follow(native); }
    [[nodiscard]] std::unique_ptr<NativeClient> make_native_client() override {
      return std::make_unique<SmrdClient>(delivered_);
    }
    [[nodiscard]] std::size_t native_client_limit() const noexcept override { return limit_; }

   private:
    std::size_t limit_;
    PeriodSoFar delivered_;  ///< the period as far as the clients have it
  };
  return std::make_unique<Replay>(settings_of(config).max_clients);
}

std::unique_ptr<NativeClient> SmrDriver::make_native_client() {
  return std::make_unique<SmrdClient>(delivered_);
}

protocol::Result<protocol::Bytes> SmrDriver::command_from_json(std::string_view cmd,
                                                               const nlohmann::json& object) const {
  return protocol::smr::command_messages(cmd, object, geometry_);
}

MotionEffect SmrDriver::motion_effect(protocol::ByteView command) const {
  const auto speeds = protocol::smr::speed_commands(command);
  if (speeds.empty()) return {};
  if (is_stop(speeds)) return MotionEffect{.stops = true};
  // A speed holds until the next: whoever sets one drives the robot.
  return MotionEffect{.motion = true, .keeps_moving = true};
}

protocol::Result<protocol::Done> SmrDriver::submit(protocol::CommandToken token, protocol::ByteView command) {
  auto queued = link_.submit(token, command, is_stop(protocol::smr::speed_commands(command)));
  arm_link_timer();
  return queued;
}

protocol::Result<protocol::Done> SmrDriver::stop_robot(protocol::CommandToken token) {
  protocol::Bytes stop = bus::encode_speed(bus::module::kLeftSpeed, 0);
  const protocol::Bytes right = bus::encode_speed(bus::module::kRightSpeed, 0);
  stop.insert(stop.end(), right.begin(), right.end());
  return submit(token, stop);
}

void SmrDriver::add_stats(protocol::StatsSnapshot& snapshot) const {
  const bus::LinkStats stats = link_.stats();
  snapshot.link_state = link_.state();
  snapshot.link_counters = bus::link_counters(stats);
  snapshot.commands = protocol::unacknowledged_commands(stats.commands_sent, stats.commands_failed);
  snapshot.link_summary =
      "messages in " + std::to_string(stats.decoder.messages) + ", periods " + std::to_string(stats.periods) +
      " (late " + std::to_string(stats.late_periods) + ", skipped " + std::to_string(stats.skipped_periods) +
      ", incomplete " + std::to_string(stats.incomplete_periods) + "; begun over 0.5 ms late " +
      std::to_string(stats.started_over_500us) + ", the latest " + std::to_string(stats.start_late_max_us) +
      " us late), missed replies " + std::to_string(stats.missed_replies) + ", unknown messages " +
      std::to_string(stats.decoder.unknown_type);
}

void SmrDriver::reload(const Config& config) {
  config_ = config;
  link_.set_settings(link_settings(config_));
  geometry_ = wheel_geometry(config_);
  odometry_ = bus::Odometry(geometry_);
  last_ts_.reset();
  hold_.set_hold_periods(settings_of(config_).module_loss_periods);
  model_chosen();
  arm_link_timer();
}

void SmrDriver::link_changed(protocol::LinkState state, std::string_view reason) {
  if (state == protocol::LinkState::Handshaking) {
    // The bus was (re)opened: the encoders may have started again, and no
    // module's answer from before is held.
    odometry_.reset();
    last_ts_.reset();
    hold_.reset();
  }
  push(driver_event::LinkChanged{state, std::string(reason)});
}

void SmrDriver::publish_stream(protocol::ByteView bytes) {
  driver_event::Published published;
  published.message = std::make_shared<StreamMessage>(bytes);
  push(std::move(published));
}

void SmrDriver::period_ended() {
  const protocol::Bytes end = bus::encode_period_end();
  publish_stream(end);
}

void SmrDriver::period_started(const bus::PeriodStart&, protocol::ByteView start_message, protocol::ByteView echoed) {
  protocol::Bytes bytes(start_message.begin(), start_message.end());
  bytes.insert(bytes.end(), echoed.begin(), echoed.end());
  publish_stream(bytes);
}

void SmrDriver::bus_messages(protocol::ByteView messages) {
  publish_stream(messages);
}

void SmrDriver::period_complete(const bus::Period& period) {
  const bus::Reading& fresh = period.reading;
  PeriodSnapshot snapshot{period, odometry_.pose(), link_.left_speed(), link_.right_speed(), {}, nullptr, fresh.parts};
  // The odometry counts what the encoders said in this period only.
  if ((fresh.parts & bus::part::kLeft) != 0 && (fresh.parts & bus::part::kRight) != 0) {
    const double seconds =
        last_ts_ ? static_cast<std::uint32_t>(period.start.ts - *last_ts_) / 1e6 : geometry_.period_s;
    snapshot.pose = odometry_.update(fresh.left.encoder, fresh.right.encoder, seconds);
    last_ts_ = period.start.ts;
  }
  snapshot.period.reading = hold_.fill(fresh);
  const bus::Reading& r = snapshot.period.reading;
  protocol::RobotState& state = snapshot.state;
  const bus::Pose& pose = snapshot.pose;
  state.pose = protocol::Pose{pose.x_m * 1000, pose.y_m * 1000, pose.heading_rad * 180 / std::numbers::pi};
  state.v_mm_s = pose.v_m_s * 1000;
  state.w_deg_s = pose.w_rad_s * 180 / std::numbers::pi;
  // To 10 mV, as the SMR's message wrote battery_v before the model.
  if ((r.parts & bus::part::kPower) != 0) state.battery_v = std::round(bus::analog_volts(r.analog[0]) * 100) / 100;
  if ((r.parts & bus::part::kInfrared) != 0) {
    for (const std::uint8_t value : r.ir) state.ranges_mm.push_back(ir_range_.mm(value));
  }
  snapshot.model = model_;
  driver_event::Published published;
  published.message = std::make_shared<PeriodMessage>(std::move(snapshot));
  push(std::move(published));
}

void SmrDriver::command_finished(protocol::CommandToken token, const protocol::Error* error) {
  driver_event::CommandDone done;
  done.token = token;
  if (error != nullptr) done.error = *error;
  push(std::move(done));
}

void SmrDriver::power_switch(bool on) {
  driver_event::Published published;
  published.message = std::make_shared<PowerSwitchMessage>(on);
  published.warning =
      on ? "the SMR's power switch is on again"
         : "the SMR's power switch is off (SMRD would power the computer off now; the bridge only reports it)";
  push(std::move(published));
}

}  // namespace flockbridge::bridge::smr
