#include "flockbridge/bridge/foxglove_session.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/overloaded.hpp"
#include "flockbridge/bridge/recorder.hpp"
#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/bridge/wire.hpp"
#include "flockbridge/protocol/foxglove/foxglove.hpp"

namespace flockbridge::bridge {
namespace {

namespace foxglove = protocol::foxglove;

/// A JSON message's "type". The bridge writes "type" first in every message
/// (json_codec), so it is read from there without parsing the rest; any
/// other text is parsed whole.
std::string message_type(std::string_view json) {
  constexpr std::string_view kStart = R"({"type":")";
  if (json.starts_with(kStart)) {
    const std::size_t end = json.find('"', kStart.size());
    if (end != std::string_view::npos) return std::string(json.substr(kStart.size(), end - kStart.size()));
  }
  const nlohmann::json parsed = nlohmann::json::parse(json, nullptr, false);
  if (parsed.is_object() && parsed.contains("type") && parsed["type"].is_string()) {
    return parsed["type"].get<std::string>();
  }
  return {};
}

/// Whether a message of this type states something a viewer opened later
/// should see at once (the latest one is kept).
bool states_something(std::string_view type) {
  static constexpr std::array<std::string_view, 5> kStates{"hello", "link", "lease", "emergency_latch", "recording"};
  return std::ranges::find(kStates, type) != kStates.end();
}

/// The most channels a client may advertise to publish on (Foxglove's
/// Publish panels each advertise one).
constexpr std::size_t kMostClientChannels = 64;

constexpr auto channel(Topic topic) {
  return static_cast<std::uint32_t>(topic);
}

/// The channel of a message of this type: the recording's topic's number,
/// or kFoxgloveBridgeChannel.
std::uint32_t channel_of_type(std::string_view type) {
  if (type == "sensor") return channel(Topic::Sensor);
  if (type == "hello") return channel(Topic::Hello);
  if (type == "link") return channel(Topic::Link);
  if (type == "lease" || type == "lease_request") return channel(Topic::Lease);
  if (type == "emergency" || type == "emergency_latch" || type == "safety_stop") return channel(Topic::Emergency);
  if (type == "ok" || type == "error") return channel(Topic::Answer);
  if (type == "recording") return channel(Topic::Recording);
  if (type == "stats" || type == "pairing" || type == "fleet" || type == "dropped") return kFoxgloveBridgeChannel;
  return channel(Topic::Robot);  // the robot's other messages, the family's own
}

/// What the live view derives from a sensor message for Foxglove's own
/// panels: the pose as a foxglove.PoseInFrame (metres, a quaternion; the 3D
/// panel draws it in the frame "odom"), and the range readings alone.
struct Derived {
  SharedBuffer sensor;  ///< the message they were made from
  std::string pose;     ///< empty: the message had no pose
  std::string ranges;
};

/// A number of an object, if it is there and a number.
std::optional<double> number_in(const nlohmann::ordered_json& object, std::string_view key) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number()) return std::nullopt;
  return found->get<double>();
}

Derived derive(const SharedBuffer& sensor) {
  Derived derived{sensor, {}, {}};
  // Ordered: the ranges keep the order of the sensor message's fields.
  const nlohmann::ordered_json message = nlohmann::ordered_json::parse(*sensor, nullptr, false);
  if (!message.is_object()) return derived;
  const double ts = number_in(message, "ts").value_or(0.0);
  const auto seconds = static_cast<std::int64_t>(std::floor(ts));
  const auto nanoseconds = static_cast<std::int64_t>(std::llround((ts - static_cast<double>(seconds)) * 1e9));
  const auto pose = message.find("pose");
  if (pose != message.end() && pose->is_object()) {
    const auto x_mm = number_in(*pose, "x_mm");
    const auto y_mm = number_in(*pose, "y_mm");
    const auto th_deg = number_in(*pose, "th_deg");
    if (x_mm && y_mm && th_deg) {
      constexpr double kRadiansPerDegree = 3.14159265358979323846 / 180.0;
      const double half = *th_deg * kRadiansPerDegree / 2;
      const nlohmann::ordered_json in_frame{
          {"timestamp", {{"sec", seconds}, {"nsec", std::min<std::int64_t>(nanoseconds, 999999999)}}},
          {"frame_id", "odom"},
          {"pose",
           {{"position", {{"x", *x_mm / 1000}, {"y", *y_mm / 1000}, {"z", 0}}},
            {"orientation", {{"x", 0}, {"y", 0}, {"z", std::sin(half)}, {"w", std::cos(half)}}}}}};
      derived.pose = in_frame.dump();
    }
  }
  nlohmann::ordered_json ranges{{"seq", nullptr}, {"ts", ts}, {"ranges", nlohmann::json::object()}};
  if (const auto seq = message.find("seq"); seq != message.end() && seq->is_number_unsigned()) ranges["seq"] = *seq;
  if (const auto found = message.find("ranges"); found != message.end() && found->is_object())
    ranges["ranges"] = *found;
  derived.ranges = ranges.dump();
  return derived;
}

/// The derived forms of the latest sensor messages. Every viewer takes the
/// same shared message from its queue, so each is made once, by the first
/// viewer that wants it (the loop is the only thread that uses them).
const Derived& derived_from(const SharedBuffer& sensor) {
  static thread_local std::array<Derived, 4> recent;
  static thread_local std::size_t next = 0;
  for (const Derived& each : recent) {
    if (each.sensor == sensor) return each;
  }
  Derived& slot = recent.at(next++ % recent.size());
  slot = derive(sensor);
  return slot;
}

}  // namespace

FoxgloveOffer make_foxglove_offer(const RecordingIdentity& identity) {
  std::vector<foxglove::Channel> channels;
  const auto add = [&](std::uint32_t id, std::string_view topic, std::string schema_name, std::string schema) {
    channels.push_back({id, std::string(topic), "json", std::move(schema_name), std::move(schema), "jsonschema"});
  };
  for (const Topic topic : {Topic::Sensor, Topic::Hello, Topic::Link, Topic::Lease, Topic::Emergency, Topic::Robot,
                            Topic::Answer, Topic::Recording}) {
    switch (topic) {
      case Topic::Sensor:
        add(channel(topic), topic_name(topic), topic_schema_name(topic, identity.family), identity.sensor_schema);
        break;
      case Topic::Answer:  // the answers themselves, as the JSON port sends them (a recording wraps them)
        add(channel(topic), topic_name(topic), "flockbridge.reply",
            schema_text("flockbridge reply",
                        R"({"type":{"enum":["ok","error"]},"id":{},"confirmed":{"type":"boolean"},)"
                        R"("error":{"type":"string"},"code":{"type":"string"}})",
                        R"(["type"])"));
        break;
      case Topic::Recording:  // the state, as clients are told it (a recording has its start and stop)
        add(channel(topic), topic_name(topic), "flockbridge.recording_state",
            schema_text("flockbridge recording state",
                        R"({"type":{"const":"recording"},"active":{"type":"boolean"},"since":{"type":"number"},)"
                        R"("by":{"type":"string"},"directory":{"type":"string"}})",
                        R"(["type","active"])"));
        break;
      default:
        add(channel(topic), topic_name(topic), topic_schema_name(topic, identity.family), topic_schema(topic));
    }
  }
  add(kFoxgloveBridgeChannel, kFoxgloveBridgeTopic, "flockbridge.bridge",
      schema_text("flockbridge bridge message", R"({"type":{"type":"string"}})", R"(["type"])"));
  // Derived from each sensor message, for Foxglove's panels: the pose in
  // Foxglove's own schema (the 3D panel), the range readings alone (a Plot
  // of /ranges.ranges.front).
  add(kFoxglovePoseChannel, kFoxglovePoseTopic, "foxglove.PoseInFrame",
      schema_text(
          "foxglove.PoseInFrame",
          R"({"timestamp":{"type":"object","properties":{"sec":{"type":"integer"},"nsec":{"type":"integer"}}},)"
          R"("frame_id":{"type":"string"},"pose":{"type":"object","properties":{)"
          R"("position":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"}}},)"
          R"("orientation":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"},"w":{"type":"number"}}}}}})",
          R"(["timestamp","frame_id","pose"])"));
  // Ordered: the schema names the sensors in the geometry's order.
  const nlohmann::ordered_json sensor = nlohmann::ordered_json::parse(identity.sensor_schema, nullptr, false);
  const nlohmann::ordered_json range_items =
      sensor.is_object() ? sensor["properties"].value("ranges", nlohmann::ordered_json::object())
                         : nlohmann::ordered_json::object();
  add(kFoxgloveRangesChannel, kFoxgloveRangesTopic, "flockbridge." + identity.family + ".ranges",
      schema_text("flockbridge " + identity.family + " ranges",
                  R"({"seq":{"type":"integer"},"ts":{"type":"number"},"ranges":)" + range_items.dump() + "}",
                  R"(["seq","ts","ranges"])"));

  FoxgloveOffer offer;
  const std::vector<std::string> capabilities{"clientPublish"};
  const std::vector<std::string> encodings{"json"};
  const std::vector<std::pair<std::string, std::string>> metadata{{"robot", identity.robot},
                                                                  {"family", identity.family},
                                                                  {"model", identity.model},
                                                                  {"simulated", identity.simulated ? "true" : "false"}};
  offer.server_info =
      foxglove::server_info("flockbridge " + identity.robot, capabilities, encodings, metadata, identity.session);
  offer.advertise = foxglove::advertise(channels);
  for (const foxglove::Channel& each : channels) offer.channels.push_back(each.id);
  return offer;
}

FoxgloveSession::FoxgloveSession(Host& host, std::uint64_t id, const Config& config, protocol::BridgeCounters& counters,
                                 lws* wsi, WebSocketConnection* connection, std::shared_ptr<const FoxgloveOffer> offer)
    : WebSocketSession(host, id, config, counters, wsi, connection, ClientKind::Foxglove), offer_(std::move(offer)) {
  ready_.push_back(text_frame(offer_->server_info));
  ready_.push_back(text_frame(offer_->advertise));
}

void FoxgloveSession::tell_error(const std::string& text) {
  // As the JSON port answers a bad message: counted, recorded, on /answer,
  // and so told as a status message too (next_frame).
  reply_error(nullptr, protocol::Error{text});
}

void FoxgloveSession::on_message(std::string_view message, bool binary) {
  if (binary) {
    auto op = foxglove::parse_client_binary(protocol::as_bytes(message));
    if (!op) {
      tell_error(op.error().message);
      return;
    }
    const auto& published = std::get<foxglove::ClientMessage>(op.value());
    if (!client_channels_.contains(published.channel)) {
      tell_error("a message on channel " + std::to_string(published.channel) +
                 ", which this client has not advertised: advertise a channel (encoding json) first");
      return;
    }
    handle_message(published.payload);  // a JSON command, as on port 2006
    return;
  }
  auto op = foxglove::parse_client_text(message);
  if (!op) {
    tell_error(op.error().message);
    return;
  }
  std::visit(Overloaded{
                 [&](const foxglove::Subscribe& subscribe) {
                   for (const foxglove::Subscription& s : subscribe.subscriptions) {
                     if (std::ranges::find(offer_->channels, s.channel) == offer_->channels.end()) {
                       tell_error("subscription " + std::to_string(s.id) + ": there is no channel " +
                                  std::to_string(s.channel));
                     } else if (channel_of_subscription_.contains(s.id)) {
                       tell_error("subscription " + std::to_string(s.id) + " exists already");
                     } else if (subscription_of_channel_.contains(s.channel)) {
                       tell_error("channel " + std::to_string(s.channel) + " is subscribed already, as subscription " +
                                  std::to_string(subscription_of_channel_[s.channel]));
                     } else {
                       channel_of_subscription_[s.id] = s.channel;
                       subscription_of_channel_[s.channel] = s.id;
                       if (const auto kept = kept_.find(s.channel); kept != kept_.end()) {
                         add_ready({Frame::Binary, message_frame(s.id, *kept->second)});
                       }
                     }
                   }
                 },
                 [&](const foxglove::Unsubscribe& unsubscribe) {
                   for (const std::uint32_t id : unsubscribe.subscriptions) {
                     if (const auto found = channel_of_subscription_.find(id);
                         found != channel_of_subscription_.end()) {
                       subscription_of_channel_.erase(found->second);
                       channel_of_subscription_.erase(found);
                     }
                   }
                 },
                 [&](const foxglove::Advertise& advertise) {
                   for (const foxglove::ClientChannel& c : advertise.channels) {
                     if (c.encoding != "json") {
                       tell_error("channel " + std::to_string(c.id) + " (" + c.topic + "): the robot takes JSON " +
                                  "commands (encoding json), not " + c.encoding);
                     } else if (client_channels_.size() >= kMostClientChannels && !client_channels_.contains(c.id)) {
                       tell_error("channel " + std::to_string(c.id) + " (" + c.topic + "): at most " +
                                  std::to_string(kMostClientChannels) + " channels may be advertised");
                     } else {
                       client_channels_[c.id] = c.topic;
                     }
                   }
                 },
                 [&](const foxglove::Unadvertise& unadvertise) {
                   for (const std::uint32_t id : unadvertise.channels) client_channels_.erase(id);
                 },
                 [&](const foxglove::ClientMessage&) {},  // binary only
             },
             op.value());
  flush();
}

protocol::Bytes FoxgloveSession::message_frame(std::uint32_t subscription, std::string_view json) {
  return foxglove::message_data(subscription, unix_ns_now(), protocol::as_bytes(wire::without_line_end(json)));
}

void FoxgloveSession::add_ready(Ready frame) {
  // A client that subscribes again and again without reading what it is
  // sent is closed as one too far behind, as with any other message.
  if (ready_.size() >= config_.queue_limit) {
    close("too far behind: " + std::to_string(ready_.size()) + " frames waiting", CloseKind::Behind);
    return;
  }
  ready_.push_back(std::move(frame));
}

FoxgloveSession::Ready FoxgloveSession::text_frame(std::string_view text) {
  const protocol::ByteView bytes = protocol::as_bytes(text);
  return {Frame::Text, protocol::Bytes(bytes.begin(), bytes.end())};
}

WebSocketSession::Frame FoxgloveSession::next_frame(std::vector<unsigned char>& out) {
  // The queue's messages become frames here, one message at a time, so that
  // the rest wait in the queue (where a newer sensor message replaces an
  // older one); a message on a channel nobody subscribed to is passed over.
  while (ready_.empty()) {
    const std::vector<SharedBuffer> taken = take_output(1);
    if (taken.empty()) return Frame::None;
    for (const SharedBuffer& message : taken) {
      const std::string_view json(*message);
      const std::string type = message_type(json);
      const std::uint32_t on = channel_of_type(type);
      if (states_something(type)) kept_[on] = message;
      if (type == "error") {
        const nlohmann::json error = nlohmann::json::parse(json, nullptr, false);
        const std::string text = error.is_object() ? error.value("error", std::string("error")) : "error";
        ready_.push_back(text_frame(foxglove::status(foxglove::StatusLevel::Error, text)));
      }
      if (const auto subscribed = subscription_of_channel_.find(on); subscribed != subscription_of_channel_.end()) {
        ready_.push_back({Frame::Binary, message_frame(subscribed->second, json)});
      }
      if (on == channel(Topic::Sensor)) {
        const auto pose = subscription_of_channel_.find(kFoxglovePoseChannel);
        const auto ranges = subscription_of_channel_.find(kFoxgloveRangesChannel);
        if (pose != subscription_of_channel_.end() || ranges != subscription_of_channel_.end()) {
          const Derived& derived = derived_from(message);
          if (pose != subscription_of_channel_.end() && !derived.pose.empty()) {
            ready_.push_back({Frame::Binary, message_frame(pose->second, derived.pose)});
          }
          if (ranges != subscription_of_channel_.end()) {
            ready_.push_back({Frame::Binary, message_frame(ranges->second, derived.ranges)});
          }
        }
      }
    }
  }
  Ready next = std::move(ready_.front());
  ready_.pop_front();
  out.insert(out.end(), next.bytes.begin(), next.bytes.end());
  return next.frame;
}

bool FoxgloveSession::frames_waiting() const {
  return !ready_.empty() || WebSocketSession::frames_waiting();
}

}  // namespace flockbridge::bridge
