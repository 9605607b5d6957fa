// The Bridge as the fleet sees it (Fleet::Host): its status and telemetry,
// the fleet's emergency stop and clearing, the class hub's table and stop
// buttons, and the robot's mDNS announcement.
#include "flockbridge/bridge/bridge.hpp"

#include <unistd.h>

#include "flockbridge/bridge/host_address.hpp"
#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/mdns.hpp"
#include "flockbridge/bridge/wire.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge {
namespace {

using protocol::Error;

constexpr std::chrono::milliseconds kFleetInterval{250};

/// Whether a listener bound to `bind` listens on every interface.
bool listens_everywhere(std::string_view bind) {
  return bind == "0.0.0.0" || bind == "::";
}

}  // namespace

void Bridge::fleet_emergency(const std::string& by, const std::string& reason) {
  // Latched even when the stop cannot go now (the link is down): the robot
  // must not drive off when it comes back.
  auto command = driver_->command_from_json("emergency", nlohmann::json{{"cmd", "emergency"}});
  if (command) {
    ++counters_.commands_received;
    auto sent = driver_->submit(gate_.own_token(), command.value());
    if (!sent) log_warning("the fleet's emergency stop could not go to the robot now: " + sent.error().message);
  }
  latch_emergency(StopSource::Fleet, {0, by, reason, unix_seconds_now()});
}

void Bridge::fleet_clear(const std::string& by, const std::string& reason) {
  auto cleared = latch_.clear(EmergencyLatch::Clearer::Fleet, config_.access, {0, by, reason, unix_seconds_now()});
  if (!cleared.value().fleet) {
    log_info("mqtt: " + by + " cleared the class's emergency stop; this robot had none");
    return;
  }
  const EmergencyLatch::Hold* local = latch_.first_hold();
  log_warning(by + " cleared the class's emergency stop" +
              (local == nullptr ? std::string(": the robot may drive again")
                                : "; the robot's own emergency stop (client " + std::to_string(local->client) + ", " +
                                      local->by + ") still holds"));
  fleet_.event({{"type", "emergency"},
                {"latched", latch_.latched()},
                {"source", "fleet"},
                {"client", 0},
                {"by", by},
                {"reason", reason}});
  latch_changed();
}

void Bridge::announce() const {
  const std::string& path = config_.mdns_service_file;
  if (path.empty()) return;
  if (::access(path.c_str(), F_OK) != 0) {
    log_debug("mDNS: no " + path + " (the package installs it): the robot is not announced on the network");
    return;
  }
  const std::string name = config_.mqtt.robot_name.empty() ? default_robot_name() : config_.mqtt.robot_name;
  MdnsAnnouncement announcement;
  announcement.json_port = json_port();
  announcement.http_port = config_.http ? http_port() : 0;
  announcement.txt = {"txtvers=1", "robot=" + name, "json=" + std::to_string(json_port())};
  if (config_.http) announcement.txt.push_back("http=" + std::to_string(http_port()));
  if (driver_->has_robot()) {
    announcement.name = name + " (" + std::string(driver_->family()) + ")";
    announcement.txt.push_back("family=" + std::string(driver_->family()));
    if (!driver_->model().empty()) announcement.txt.push_back("model=" + std::string(driver_->model()));
    announcement.txt.push_back("native=" + std::to_string(native_port()));
  } else {
    announcement.name = name + " (class hub)";
  }
  if (config_.fleet_hub) {
    announcement.txt.emplace_back("hub=1");
    if (!driver_->has_robot()) announcement.http_path = "/fleet/";
  }
  announcement.txt.emplace_back("version=" FLOCKBRIDGE_VERSION);
  if (auto written = write_avahi_service_file(path, announcement); !written) {
    log_warning("mDNS: the robot is not announced on the network: " + written.error().message);
    return;
  }
  log_info("mDNS: announced as \"" + announcement.name + "\" (" + path + ")");
}

void Bridge::fleet_changed() {
  // At most four fleet messages a second, however busy the class.
  if (fleet_due_ || !fleet_timer_) return;
  fleet_due_ = true;
  uv_timer_start(
      fleet_timer_.get(),
      [](uv_timer_t* timer) {
        if (auto* self = owner_of<Bridge>(timer)) self->send_fleet();
      },
      kFleetInterval.count(), 0);
}

void Bridge::send_fleet() {
  fleet_due_ = false;
  clients_.send_to([](const Session& session) { return !session.closing() && session.follows_fleet(); },
                   [&](const Session& session) { return wire::json_only(session.encoding(), fleet_message()); });
}

std::string Bridge::fleet_message() const {
  nlohmann::ordered_json message{{"type", "fleet"}, {"now", unix_seconds_now()}, {"robots", fleet_.robots()}};
  return message.dump();
}

void Bridge::stop_fleet(Session& session, const protocol::FleetEmergency& request, const nlohmann::json& id) {
  const char* what = request.clear ? "clear the class's emergency stop" : "stop the class";
  if (!fleet_.hub()) {
    session.reply_error(id, Error{"this bridge is not the class hub (fleet.hub)"});
    return;
  }
  if (session.role() != Role::Teacher) {
    session.reply_error(id, Error{config_.access.teacher_secret.empty()
                                      ? std::string("only the teacher may ") + what +
                                            " from the hub, and no teacher secret is set on it (access.teacher_secret)"
                                      : std::string("only the teacher may ") + what +
                                            R"( from the hub: {"cmd":"auth","teacher":"..."})",
                                  protocol::ErrorCode::Denied});
    return;
  }
  const std::string by = "the teacher at " + session.peer();
  auto sent = request.clear ? fleet_.publish_clear(request.robot, by) : fleet_.publish_emergency(request.robot, by);
  if (!sent) {
    session.reply_error(id, sent.error());
    return;
  }
  const std::vector<std::string>& offline = sent.value().offline;
  if (offline.empty()) {
    session.reply_ok(id);
    return;
  }
  // A robot that is offline does not hear it now: say so, and what happens.
  std::string names;
  for (const std::string& name : offline) names += (names.empty() ? "" : ", ") + name;
  const std::string note = names + (offline.size() == 1 ? " is" : " are") +
                           " offline and did not hear it; the hub keeps the " + (request.clear ? "clearing" : "stop") +
                           " and sends it the moment " + (offline.size() == 1 ? "it is" : "each is") +
                           " back on the broker" + (request.clear ? "" : " (Clear on the hub cancels it)");
  session.send(wire::json_only(session.encoding(), protocol::json::fleet_sent(id, offline, note)));
}

nlohmann::ordered_json Bridge::fleet_status() const {
  const std::string scheme = config_.http_tls_cert.empty() ? "http://" : "https://";
  // Where clients reach the robot: its JSON listener's address, or every
  // address of its interfaces when it listens on all of them.
  const std::string& json_bind = config_.effective_json_bind();
  const std::vector<std::string> addresses =
      listens_everywhere(json_bind) ? interface_addresses() : std::vector<std::string>{json_bind};
  nlohmann::ordered_json status{
      {"family", driver_->family()},
      {"model", driver_->model()},
      {"version", FLOCKBRIDGE_VERSION},
      {"session", session_id_},
      {"addresses", addresses},
      {"ports", {{"native", native_port()}, {"json", json_port()}, {"http", http_port()}}},
      {"link", {{"state", protocol::link_state_name(driver_->link_state())}, {"reason", driver_->link_reason()}}},
      {"lease", lease_holder_json()},
      {"emergency", latch_.latched()},
      {"latch", latch_.summary(config_.access)},
  };
  if (config_.foxglove) status["ports"]["foxglove"] = foxglove_port();
  if (config_.http && http_port() != 0) {
    const std::string& bind = config_.effective_http_bind();
    const std::string host = !listens_everywhere(bind) ? bind : addresses.empty() ? "localhost" : addresses.front();
    const bool ipv6 = host.find(':') != std::string::npos;
    status["dashboard"] = scheme + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(http_port()) + "/";
  }
  return status;
}

nlohmann::ordered_json Bridge::fleet_telemetry() const {
  const protocol::StatsSnapshot stats = snapshot();
  nlohmann::ordered_json telemetry{{"link", protocol::link_state_name(stats.link_state)}};
  if (latest_sensor_ && stats.link_state == protocol::LinkState::Up) {
    // The sensor message, read for the robot model's fields (every family's).
    const SharedBuffer encoded = latest_sensor_->encode(Encoding::Json, sensor_seq_, unix_seconds_now());
    const nlohmann::json sensor = encoded ? nlohmann::json::parse(*encoded, nullptr, false) : nlohmann::json{};
    if (sensor.is_object()) {
      for (const char* key : {"battery_v", "pose", "v_mm_s", "w_deg_s", "bumped"}) {
        if (const auto found = sensor.find(key); found != sensor.end()) telemetry[key] = *found;
      }
    }
  }
  const nlohmann::ordered_json holder = lease_holder_json();
  telemetry["lease"] = holder.is_object() ? holder["peer"] : nlohmann::ordered_json(nullptr);
  telemetry["emergency"] = latch_.latched();
  telemetry["clients"] = stats.clients.size();
  std::uint64_t failed = 0;
  for (const std::uint64_t n : stats.bridge.failed) failed += n;
  telemetry["errors"] = {{"bad_checksum", protocol::counter(stats.link_counters, "bad_checksum")},
                         {"commands_failed", failed},
                         {"safety_stops", stats.bridge.safety_stops},
                         {"sensor_messages_dropped", stats.bridge.sensor_messages_dropped}};
  return telemetry;
}

}  // namespace flockbridge::bridge
