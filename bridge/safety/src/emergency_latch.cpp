#include "flockbridge/bridge/emergency_latch.hpp"

#include "flockbridge/protocol/json_codec.hpp"

#include <algorithm>

namespace flockbridge::bridge {
namespace {

using protocol::Error;
using protocol::ErrorCode;

/// Who may clear the local stop.
std::vector<std::string> local_clearers(const AccessSettings& access) {
  if (access.teacher_secret.empty()) return {"driver"};
  if (access.driver_clears_emergency) return {"teacher", "driver"};
  return {"teacher"};
}

/// Who may clear the fleet's stop.
std::vector<std::string> fleet_clearers(const AccessSettings& access) {
  if (access.teacher_secret.empty()) return {"fleet"};
  return {"fleet", "teacher"};
}

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::ranges::find(names, name) != names.end();
}

std::string_view clearer_name(EmergencyLatch::Clearer who) {
  switch (who) {
    case EmergencyLatch::Clearer::Viewer:
      return "viewer";
    case EmergencyLatch::Clearer::Driver:
      return "driver";
    case EmergencyLatch::Clearer::Teacher:
      return "teacher";
    case EmergencyLatch::Clearer::Fleet:
      return "fleet";
  }
  return "viewer";
}

/// "the teacher or a driver", from the names messages use.
std::string in_words(const std::vector<std::string>& names) {
  std::vector<std::string> words;
  for (const std::string& name : names) {
    if (name == "teacher") words.emplace_back("the teacher");
    if (name == "driver") words.emplace_back("a driver");
    if (name == "fleet") words.emplace_back("the class hub (or the fleet's clear topic)");
  }
  std::string text;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) text += i + 1 == words.size() ? " or " : ", ";
    text += words[i];
  }
  return text;
}

}  // namespace

std::string_view stop_source_name(StopSource source) noexcept {
  return source == StopSource::Fleet ? "fleet" : "local";
}

EmergencyLatch::Clearer EmergencyLatch::clearer(Role role) noexcept {
  switch (role) {
    case Role::Viewer:
      return Clearer::Viewer;
    case Role::Driver:
      return Clearer::Driver;
    case Role::Teacher:
      return Clearer::Teacher;
  }
  return Clearer::Viewer;
}

const EmergencyLatch::Hold* EmergencyLatch::first_hold() const noexcept {
  if (fleet_) return &*fleet_;
  if (local_) return &*local_;
  return nullptr;
}

bool EmergencyLatch::latch(StopSource source, Hold hold) {
  const bool was_free = !latched();
  (source == StopSource::Local ? local_ : fleet_) = std::move(hold);
  return was_free;
}

protocol::Result<EmergencyLatch::Cleared> EmergencyLatch::clear(Clearer who, const AccessSettings& access, Hold by) {
  Cleared cleared;
  if (who == Clearer::Fleet) {
    if (fleet_) {
      cleared.fleet = true;
      fleet_.reset();
      cleared_ = std::move(by);
      cleared_source_ = StopSource::Fleet;
    }
    return cleared;
  }
  const std::string_view name = clearer_name(who);
  if (fleet_ && !contains(fleet_clearers(access), name)) {
    return Error{"this is the class's emergency stop, from " + fleet_->by +
                     ": only the class hub (its Clear button, or the fleet's clear topic) or this robot's teacher "
                     "may clear it",
                 ErrorCode::Denied};
  }
  if (local_ && !contains(local_clearers(access), name)) {
    if (who == Clearer::Viewer) {
      return Error{
          R"(only a driver may clear the emergency stop: give the robot's PIN first: {"cmd":"auth","pin":"..."})",
          ErrorCode::Denied};
    }
    return Error{"only the teacher may clear the emergency stop (access.driver_clears_emergency is false)",
                 ErrorCode::Denied};
  }
  cleared.local = local_.has_value();
  cleared.fleet = fleet_.has_value();
  if (cleared.any()) {
    local_.reset();
    fleet_.reset();
    cleared_ = std::move(by);
    cleared_source_ = StopSource::Local;
  }
  return cleared;
}

std::vector<std::string> EmergencyLatch::may_clear(StopSource source, const AccessSettings& access) {
  return source == StopSource::Local ? local_clearers(access) : fleet_clearers(access);
}

std::vector<std::string> EmergencyLatch::may_clear(const AccessSettings& access) const {
  if (local_ && fleet_) {
    // Only a role that may clear both clears it alone.
    std::vector<std::string> both;
    for (const std::string& name : local_clearers(access)) {
      if (contains(fleet_clearers(access), name)) both.push_back(name);
    }
    return both;
  }
  if (local_) return local_clearers(access);
  if (fleet_) return fleet_clearers(access);
  return {};
}

std::string EmergencyLatch::who_may_clear(const AccessSettings& access) const {
  if (local_ && fleet_ && may_clear(access).empty()) {
    return in_words(fleet_clearers(access)) + " clears the class's stop, then " + in_words(local_clearers(access)) +
           " the robot's own";
  }
  return in_words(may_clear(access));
}

std::string EmergencyLatch::message(const AccessSettings& access) const {
  const auto describe = [&](StopSource source, const Hold& held, bool holding) {
    return protocol::json::LatchHold{stop_source_name(source),
                                     held.client,
                                     held.by,
                                     held.reason,
                                     held.since,
                                     holding ? may_clear(source, access) : std::vector<std::string>{}};
  };
  protocol::json::LatchState state;
  const std::string clear_by = who_may_clear(access);
  state.latched = latched();
  state.clear_by = clear_by;
  state.may_clear = may_clear(access);
  for (const StopSource source : {StopSource::Fleet, StopSource::Local}) {
    if (const auto& held = hold(source)) state.holds.push_back(describe(source, *held, true));
  }
  if (!state.holds.empty()) {
    state.by = state.holds.front();
  } else if (const auto& cleared = last_cleared()) {
    state.by = describe(last_cleared_by(), *cleared, false);
  }
  return protocol::json::emergency_latch(state);
}

nlohmann::ordered_json EmergencyLatch::summary(const AccessSettings& access) const {
  const Hold* first = first_hold();
  if (first == nullptr) return nullptr;
  return {{"source", hold(StopSource::Fleet) ? "fleet" : "local"},
          {"client", first->client},
          {"by", first->by},
          {"reason", first->reason},
          {"since", first->since},
          {"local_too", hold(StopSource::Fleet) && hold(StopSource::Local)},
          {"may_clear", may_clear(access)},
          {"clear_by", who_may_clear(access)}};
}

}  // namespace flockbridge::bridge
