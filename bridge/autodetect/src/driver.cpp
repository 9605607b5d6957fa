#include "flockbridge/bridge/autodetect/driver.hpp"

#include <algorithm>
#include <system_error>
#include <utility>

#include "flockbridge/bridge/log.hpp"

namespace flockbridge::bridge::autodetect {

namespace fs = std::filesystem;
using protocol::Done;
using protocol::Error;
using protocol::ErrorCode;
using protocol::Result;

namespace {

/// The most drivers of robots that went kept at once.
constexpr std::size_t kRetiredKept = 4;

fs::path node_of(const std::string& device) {
  std::error_code error;
  fs::path node = fs::canonical(device, error);
  return error ? fs::path{} : node;
}

}  // namespace

CandidateScan search_scan(const Config& config, std::span<const RobotFamily* const> families) {
  CandidateScan scan;
  if (config.device != kAnyDevice) {
    scan.patterns = {config.device};
    return scan;
  }
  for (const RobotFamily* family : families) {
    if (!family->default_device.empty()) scan.named.emplace_back(family->default_device);
  }
  scan.patterns = search_patterns(config.serial_search);
  return scan;
}

AutoDriver::AutoDriver(uv_loop_t* loop, const Config& config, Host& host, std::vector<const RobotFamily*> families)
    : loop_(loop),
      config_(config),
      host_(host),
      families_(std::move(families)),
      scan_(search_scan(config_, families_)),
      watch_(
          loop, [this](const fs::path& folder, std::string_view name) { return concerns_scan(scan_, folder, name); },
          [this] { look(false); }),
      prober_(loop, make_probes(families_), [this](const SerialProber::Outcome& outcome) { probed(outcome); }) {}

AutoDriver::~AutoDriver() {
  stop();
}

std::string AutoDriver::searched() const {
  std::string where;
  for (const std::string& pattern : scan_.patterns) where += (where.empty() ? "" : " ") + pattern;
  return where;
}

std::string_view AutoDriver::family() const noexcept {
  if (family_ != nullptr) return family_->name;
  return families_.size() == 1 ? families_.front()->name : kAnyFamily;
}

std::string_view AutoDriver::model() const noexcept {
  return robot_ ? robot_->model() : std::string_view{};
}

std::span<const std::string> AutoDriver::commands() const noexcept {
  return robot_ ? robot_->commands() : std::span<const std::string>{};
}

std::string_view AutoDriver::device_hint() const noexcept {
  return robot_ ? robot_->device_hint() : std::string_view{};
}

std::string_view AutoDriver::native_programs() const noexcept {
  return robot_ ? robot_->native_programs() : std::string_view{};
}

const protocol::json::FoundDescription* AutoDriver::found() const noexcept {
  return robot_ ? &found_ : nullptr;
}

std::uint16_t AutoDriver::native_port(std::uint16_t configured) const noexcept {
  return family_ != nullptr && config_.native_port_follows_family ? family_->native_port : configured;
}

Result<Done> AutoDriver::start() {
  if (families_.empty() || prober_.probing()) return Error{"plug and play: no robot family to look for"};
  if (make_probes(families_).empty()) {
    return Error{"plug and play: the " + std::string(family()) +
                 " robot cannot be recognised on a serial line; name its device with serial.device (--device)"};
  }
  if (retry_.init(this, [this](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0 ||
      next_.init(this, [this](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0) {
    return Error{"plug and play: cannot create the loop's timers"};
  }
  if (auto watching = watch_.watch(candidate_folders(scan_)); !watching) {
    log_warning(watching.error().message + ": a robot plugged in later is found after a restart only");
  }
  started_ = true;
  searching("looking for a robot on " + searched());
  const auto retry = static_cast<std::uint64_t>(std::chrono::milliseconds(kSilentRetry).count());
  uv_timer_start(
      retry_.get(),
      [](uv_timer_t* t) {
        if (auto* self = owner_of<AutoDriver>(t)) self->look(true);
      },
      retry, retry);
  look(false);
  return Done{};
}

void AutoDriver::stop() {
  if (stopped_) return;
  stopped_ = true;
  prober_.cancel();
  watch_.stop();
  retry_.reset();
  next_.reset();
  if (robot_) robot_->stop();
  for (const auto& retired : retired_) retired->stop();
  events_.clear();
}

void AutoDriver::look(bool again) {
  if (stopped_ || !started_) return;
  // Folders may have come (/dev/serial/by-id with the first adapter) or gone.
  (void)watch_.watch(candidate_folders(scan_));
  if (robot_) {
    if (node_of(found_device_) == robot_node_) return;  // still there: nothing else is looked at
    lost("the robot's device " + found_device_ + " was unplugged");
  }
  const std::vector<std::string> now = serial_candidates(scan_);
  for (auto it = looked_.begin(); it != looked_.end();) {
    const bool there = std::find(now.begin(), now.end(), it->first) != now.end();
    it = there && node_of(it->first) == it->second.node ? std::next(it) : looked_.erase(it);
  }
  for (const std::string& device : now) {
    if (device == probing_ || std::find(queue_.begin(), queue_.end(), device) != queue_.end()) continue;
    if (const auto seen = looked_.find(device); seen != looked_.end()) {
      if (seen->second.verdict == Looked::Verdict::Other) continue;
      if (seen->second.verdict == Looked::Verdict::Silent && !again) continue;
    }
    queue_.push_back(device);
  }
  probe_next();
}

void AutoDriver::probe_next() {
  if (stopped_ || robot_ || prober_.probing()) return;
  while (!queue_.empty()) {
    probing_ = queue_.front();
    queue_.pop_front();
    queue_event(driver_event::Note{"plug and play: looking at " + probing_});
    auto started = prober_.start(probing_);
    if (started) return;
    looked_[probing_] = Looked{node_of(probing_), Looked::Verdict::Unopened,
                               probing_ + " cannot be opened (" + started.error().message + ")"};
    log_info("plug and play: " + looked_[probing_].why + "; looked at again when it changes");
    probing_.clear();
  }
  // Every device has been looked at: say what became of each.
  std::string verdicts;
  for (const auto& [device, seen] : looked_) verdicts += (verdicts.empty() ? "" : "; ") + seen.why;
  searching(verdicts.empty() ? "no robot found: no serial device on " + searched() + "; plug the robot in"
                             : "no robot found (" + verdicts + "); waiting for a robot to be plugged in");
}

void AutoDriver::probed(const SerialProber::Outcome& outcome) {
  probing_.clear();
  if (stopped_) return;
  const auto family = std::find_if(families_.begin(), families_.end(),
                                   [&](const RobotFamily* each) { return each->name == outcome.family; });
  if (!outcome.family.empty() && family != families_.end()) {
    serve(**family, outcome);
    return;
  }
  Looked seen{node_of(outcome.device), outcome.heard ? Looked::Verdict::Other : Looked::Verdict::Silent, {}};
  seen.why = outcome.device + (outcome.heard ? " talks, but as no robot does" : " is silent");
  // Said once: a silent device looked at again every few seconds is not logged each time.
  const auto before = looked_.find(outcome.device);
  if (before == looked_.end() || before->second.verdict != seen.verdict) {
    const std::string then = outcome.heard ? "left alone until it is plugged in again"
                                           : "looked at again every " + std::to_string(kSilentRetry.count()) + " s";
    log_info("plug and play: " + seen.why + ": " + then + " (" + outcome.why_not + ")");
  }
  looked_[outcome.device] = std::move(seen);
  // The next device after the prober's callback has returned.
  uv_timer_start(
      next_.get(),
      [](uv_timer_t* t) {
        if (auto* self = owner_of<AutoDriver>(t)) self->probe_next();
      },
      0, 0);
}

Config AutoDriver::served_config(const Config& config) const {
  Config served = config;
  served.family = family_->name;
  served.device = found_device_;
  served.baud = found_.baud;
  if (config.native_port_follows_family) served.native_port = family_->native_port;
  served.native_port_follows_family = false;
  return served;
}

void AutoDriver::serve(const RobotFamily& family, const SerialProber::Outcome& outcome) {
  family_ = &family;
  found_device_ = outcome.device;
  robot_node_ = node_of(outcome.device);
  found_usb_ = outcome.usb ? protocol::usb_id_text(*outcome.usb) : std::string{};
  found_ = protocol::json::FoundDescription{found_device_, outcome.baud, outcome.took.count(), found_usb_};
  served_ = served_config(config_);
  queue_.clear();
  looked_.clear();
  log_info("plug and play: found " + outcome.robot_text() + " on " + found_device_ + " at " +
           std::to_string(outcome.baud) + " baud in " + outcome.took_text() +
           (found_usb_.empty() ? "" : ", USB " + found_usb_) + ": " + outcome.finding.evidence);
  // A robot that resets at each opening of its port is served on the device as the probe left it.
  if (outcome.open_device && outcome.open_device->is_open()) {
    hand_over_device(found_device_, std::move(*outcome.open_device), outcome.said);
  }
  robot_ = family.make_driver(loop_, served_, host_);
  queue_event(driver_event::RobotChanged{});
  auto started = robot_->start();
  drop_handed_over_device(found_device_);  // taken at the start, or closed now
  if (!started) {
    lost("the " + std::string(family.name) + " robot on " + found_device_ +
         " cannot be served: " + started.error().message);
  }
}

void AutoDriver::lost(const std::string& why) {
  for (const protocol::CommandToken token : std::exchange(unanswered_, {})) {
    queue_event(driver_event::CommandDone{token, Error{why + " before the robot answered", ErrorCode::LinkDown}, {}});
  }
  robot_->stop();
  retired_.push_back(std::move(robot_));
  if (retired_.size() > kRetiredKept) retired_.pop_front();
  family_ = nullptr;
  log_warning("plug and play: " + why);
  queue_event(driver_event::LinkChanged{protocol::LinkState::Down, why + "; looking for a robot"});
  reason_ = why + "; looking for a robot";
  queue_event(driver_event::RobotChanged{});
}

void AutoDriver::searching(std::string reason) {
  if (reason == reason_) return;  // a silent device looked at again: nothing new to tell
  reason_ = std::move(reason);
  queue_event(driver_event::LinkChanged{protocol::LinkState::Down, reason_});
}

void AutoDriver::queue_event(DriverEvent event) {
  if (stopped_) return;
  events_.push_back(std::move(event));
  host_.driver_has_events();
}

void AutoDriver::client_arrived() {
  if (robot_) robot_->client_arrived();
}

std::optional<DriverEvent> AutoDriver::next_event() {
  if (!events_.empty()) {
    DriverEvent event = std::move(events_.front());
    events_.pop_front();
    return event;
  }
  if (!robot_) return std::nullopt;
  auto event = robot_->next_event();
  if (event) {
    if (const auto* done = std::get_if<driver_event::CommandDone>(&*event)) unanswered_.erase(done->token);
  }
  return event;
}

std::unique_ptr<NativeClient> AutoDriver::make_native_client() {
  return robot_ ? robot_->make_native_client() : nullptr;
}

std::size_t AutoDriver::native_client_limit() const noexcept {
  return robot_ ? robot_->native_client_limit() : 0;
}

Result<protocol::Bytes> AutoDriver::command_from_json(std::string_view cmd, const nlohmann::json& object) const {
  if (robot_) return robot_->command_from_json(cmd, object);
  return Error{"no robot yet (" + reason_ + "): " + std::string(cmd) + " not sent", ErrorCode::LinkDown};
}

MotionEffect AutoDriver::motion_effect(protocol::ByteView command) const {
  return robot_ ? robot_->motion_effect(command) : MotionEffect{};
}

Result<Done> AutoDriver::submit(protocol::CommandToken token, protocol::ByteView command) {
  if (!robot_) return Error{"no robot yet", ErrorCode::LinkDown};
  auto submitted = robot_->submit(token, command);
  if (submitted) unanswered_.insert(token);
  return submitted;
}

Result<Done> AutoDriver::reset_pose(protocol::CommandToken token) {
  if (!robot_) return Error{"no robot yet", ErrorCode::LinkDown};
  auto submitted = robot_->reset_pose(token);
  if (submitted) unanswered_.insert(token);
  return submitted;
}

Result<Done> AutoDriver::stop_robot(protocol::CommandToken token) {
  if (!robot_) return Error{"no robot yet", ErrorCode::LinkDown};
  auto submitted = robot_->stop_robot(token);
  if (submitted) unanswered_.insert(token);
  return submitted;
}

const protocol::RobotGeometry& AutoDriver::geometry() const {
  return robot_ ? robot_->geometry() : no_geometry_;
}

nlohmann::ordered_json AutoDriver::sensor_properties() const {
  return robot_ ? robot_->sensor_properties() : nlohmann::ordered_json::object();
}

protocol::LinkState AutoDriver::link_state() const noexcept {
  return robot_ ? robot_->link_state() : protocol::LinkState::Down;
}

const std::string& AutoDriver::link_reason() const noexcept {
  return robot_ ? robot_->link_reason() : reason_;
}

void AutoDriver::add_stats(protocol::StatsSnapshot& snapshot) const {
  if (robot_) robot_->add_stats(snapshot);
}

void AutoDriver::reload(const Config& config) {
  config_ = config;
  if (robot_) {
    served_ = served_config(config_);
    robot_->reload(served_);
  }
}

}  // namespace flockbridge::bridge::autodetect
