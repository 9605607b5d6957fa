// A client of the Foxglove live view: Foxglove or Lichtblick connected with
// "Open connection" (Foxglove WebSocket, ws://ROBOT:8765), or any program
// speaking the Foxglove WebSocket protocol (protocol/foxglove).
//
// It is a WebSocket client of the bridge like the dashboard's: it gets the
// messages a JSON client gets, from the same shared queue (latest-wins
// sensor messages, the stall and backlog rules), and its commands are the
// JSON port's, under the same rules (a viewer only stops; the PIN makes it
// a driver). Only the framing differs: the session first says what it
// serves (serverInfo, then one channel per topic, each with its JSON
// Schema, the recording's topics), and then sends each message as a binary
// frame on the client's subscription to its topic's channel, stamped with
// the time the bridge sent it. Messages on topics the client has not
// subscribed to are passed over. Two channels are made from each sensor
// message for Foxglove's panels: /pose (a foxglove.PoseInFrame) and
// /ranges, made once for all viewers. The latest message of each topic that
// states something (the hello, the link, the lease, the emergency stop, the
// recording) is kept, and a new subscription gets it at once, so that a
// viewer opened mid-run shows the robot's state before anything changes.
//
// A client that publishes advertises a channel of its own (encoding json)
// and sends JSON commands on it, one a message; the answers come on
// /answer, and an error is also told as a status message, which Foxglove
// shows among its problems.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flockbridge/bridge/web_server.hpp"

namespace flockbridge::bridge {

/// What the live view serves, the same for every client while the bridge runs.
struct FoxgloveOffer {
  std::string server_info;  ///< the serverInfo message
  std::string advertise;    ///< the advertise message: every channel
  /// The channels' ids, for checking a subscription.
  std::vector<std::uint32_t> channels;
};

struct RecordingIdentity;

/// The live view's offer for this robot: serverInfo (its name, family and
/// model), and a channel for each topic the JSON clients' messages go on
/// (the recording's topic names; /sensor with the family's JSON Schema),
/// with /bridge for the bridge's own, and /pose and /ranges derived from
/// the sensor messages.
[[nodiscard]] FoxgloveOffer make_foxglove_offer(const RecordingIdentity& identity);

/// The channel of the bridge's own messages that recordings leave out
/// (stats, pairing, the class's fleet, dropped notices).
inline constexpr std::uint32_t kFoxgloveBridgeChannel = 100;
inline constexpr std::string_view kFoxgloveBridgeTopic = "/bridge";
/// Channels derived from each sensor message, for Foxglove's own panels: the
/// pose as a foxglove.PoseInFrame, the range readings alone.
inline constexpr std::uint32_t kFoxglovePoseChannel = 101;
inline constexpr std::string_view kFoxglovePoseTopic = "/pose";
inline constexpr std::uint32_t kFoxgloveRangesChannel = 102;
inline constexpr std::string_view kFoxgloveRangesTopic = "/ranges";

class FoxgloveSession final : public WebSocketSession {
 public:
  FoxgloveSession(Host& host, std::uint64_t id, const Config& config, protocol::BridgeCounters& counters, lws* wsi,
                  WebSocketConnection* connection, std::shared_ptr<const FoxgloveOffer> offer);

 private:
  void on_message(std::string_view message, bool binary) override;
  Frame next_frame(std::vector<unsigned char>& out) override;
  [[nodiscard]] bool frames_waiting() const override;

  /// Frames made ahead of the queue's messages: the server's text messages
  /// (serverInfo, advertise, status), and the kept messages a new
  /// subscription gets first (already framed).
  struct Ready {
    Frame frame;
    protocol::Bytes bytes;
  };

  /// Tells the client something went wrong (a status message, level error).
  void tell_error(const std::string& text);
  /// A JSON message on a subscription, as its binary frame, stamped now.
  [[nodiscard]] static protocol::Bytes message_frame(std::uint32_t subscription, std::string_view json);
  [[nodiscard]] static Ready text_frame(std::string_view text);
  /// A frame made ahead; a client that lets too many wait is closed.
  void add_ready(Ready frame);

  std::shared_ptr<const FoxgloveOffer> offer_;
  std::deque<Ready> ready_;
  std::map<std::uint32_t, std::uint32_t> subscription_of_channel_;
  std::map<std::uint32_t, std::uint32_t> channel_of_subscription_;
  /// The client's own channels it may publish JSON commands on, by its ids.
  std::map<std::uint32_t, std::string> client_channels_;
  /// The latest message of each channel that states something, by channel.
  std::map<std::uint32_t, SharedBuffer> kept_;
};

}  // namespace flockbridge::bridge
