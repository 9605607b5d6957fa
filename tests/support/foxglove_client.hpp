// A client of the bridge's Foxglove live view (foxglove.websocket.v1),
// written from the protocol's specification (github.com/foxglove/ws-protocol,
// docs/spec.md), not from the bridge's code, on the tests' own WebSocket
// client: serverInfo then advertise as text, subscriptions by the client's
// ids, each message a binary frame (opcode 1, the subscription, a u64 time
// in nanoseconds, the JSON); the client's own channels and its messages on
// them. It takes nothing on trust: a frame the protocol does not allow
// throws. For the end-to-end tests and clients_bench.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/web_client.hpp"

namespace flockbridge::testing {

class FoxgloveClient {
 public:
  static constexpr const char* kSubprotocol = "foxglove.websocket.v1";

  struct Data {
    std::uint32_t subscription;
    std::uint64_t unix_ns;
    nlohmann::json message;
  };

  /// Connects to 127.0.0.1:port (with an Origin header when `origin` is not empty).
  explicit FoxgloveClient(std::uint16_t port, const std::string& origin = {}, int receive_buffer = 0);

  /// Whether the server took the connection and chose the subprotocol.
  [[nodiscard]] bool accepted() const { return ws_.accepted(); }
  WebSocketClient& ws() { return ws_; }
  TcpClient& tcp() { return ws_.tcp(); }

  /// Reads serverInfo and advertise, in that order; false when they do not come so.
  bool open(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  /// Subscribes to `topic`'s channel as `id` (the topic must have been advertised).
  void subscribe(std::uint32_t id, const std::string& topic);
  /// Advertises a channel of the client's own, as Foxglove's Publish panel does.
  void advertise(std::uint32_t id, const std::string& topic, const std::string& encoding = "json");
  /// A message on one of the client's channels: opcode 1, the channel (u32 LE), the payload.
  void publish(std::uint32_t channel, const std::string& payload);
  void publish(std::uint32_t channel, const nlohmann::json& command) { publish(channel, command.dump()); }

  /// The next message on a subscription; status messages on the way are
  /// kept in `statuses`. Nothing on timeout or once the server has closed.
  std::optional<Data> next(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  /// The next message on `topic`'s subscription; those on other topics
  /// (but /sensor, which waits for nobody) wait for their own turn.
  std::optional<Data> next_on(const std::string& topic, std::chrono::milliseconds timeout = std::chrono::seconds(5));
  /// The next message on any subscription, as JSON (what clients_bench reads).
  std::optional<nlohmann::json> read_json(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  /// The next message of this type on any subscription, skipping others.
  std::optional<nlohmann::json> read_json_type(const std::string& type,
                                               std::chrono::milliseconds timeout = std::chrono::seconds(5));
  /// The topic a subscription is for ("" for none).
  [[nodiscard]] std::string topic_of(std::uint32_t subscription) const;

  nlohmann::json server_info;
  std::map<std::string, nlohmann::json> channels;  ///< advertised, by topic
  std::vector<nlohmann::json> statuses;

 private:
  WebSocketClient ws_;
  std::map<std::uint32_t, std::string> topic_of_;
  std::deque<Data> waiting_;
};

}  // namespace flockbridge::testing
