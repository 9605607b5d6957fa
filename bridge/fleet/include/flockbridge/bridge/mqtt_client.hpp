// An MQTT connection (libmosquitto) driven by the bridge's libuv loop: no
// thread of its own, no blocking call on the loop.
//
// - The broker's name is resolved on a thread of its own (HostLookup);
//   libmosquitto is only ever given a numeric address, so its own
//   getaddrinfo never waits for DNS.
// - Its socket is watched with one uv_poll; mosquitto_loop_read and
//   mosquitto_loop_write run when it is ready, mosquitto_loop_misc (the
//   keepalive) once a second.
// - A lost or refused connection is tried again after a wait that doubles
//   from reconnect_min to reconnect_max, with some jitter, so that a class of
//   robots does not come back in step after a broker restart.
// - What is published waits in a bounded queue of our own and is handed to
//   libmosquitto only while it has little in flight and nothing unwritten:
//   a slow or stopped broker costs a counted drop (the oldest message), never
//   memory without bound nor time on the loop. A message may replace the one
//   queued on its topic (state topics, where only the latest matters).
// - libmosquitto's callbacks only record what happened; the Host hears of it
//   after libmosquitto has returned, so it may publish from there.
// - It speaks MQTT 5 and subscribes with "retain as published", so that a
//   message the broker retains is marked so even when it reaches a
//   subscriber live (MQTT 3.1.1 clears the flag then): commands must never be
//   retained, and the Host can tell.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "flockbridge/bridge/host_lookup.hpp"
#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/bytes.hpp"

struct mosquitto;
struct mosquitto_message;

namespace flockbridge::bridge {

struct MqttMessage {
  std::string topic;
  std::string payload;
  bool retain = false;
  int qos = 0;
};

struct MqttSettings {
  std::string host;
  std::uint16_t port = 1883;
  std::string client_id;
  std::string username;  ///< empty: no credentials
  std::string password;
  std::chrono::seconds keepalive{10};
  std::chrono::milliseconds reconnect_min{250};
  std::chrono::milliseconds reconnect_max{10000};
  std::size_t queue_limit = 64;  ///< messages waiting for the broker
  std::optional<MqttMessage> will;
  std::vector<std::string> subscriptions;  ///< subscribed (QoS 1, retain as published) at each connection
};

struct MqttCounters {
  std::uint64_t connects = 0;          ///< connections the broker accepted
  std::uint64_t connect_failures = 0;  ///< attempts that did not get that far, or were refused
  std::uint64_t disconnects = 0;       ///< accepted connections lost since
  std::uint64_t published = 0;         ///< messages handed to the broker's connection
  std::uint64_t dropped = 0;           ///< messages dropped from the full queue, oldest first
  std::uint64_t replaced = 0;          ///< queued messages replaced by a newer one on their topic
  std::uint64_t received = 0;
};

class MqttClient {
 public:
  class Host {
   public:
    Host() = default;
    Host(const Host&) = delete;
    Host& operator=(const Host&) = delete;
    virtual ~Host() = default;
    /// The broker accepted the connection and the subscriptions are asked for.
    virtual void mqtt_connected() = 0;
    virtual void mqtt_message(const MqttMessage& message) = 0;
  };

  MqttClient(uv_loop_t* loop, Host& host);
  MqttClient(const MqttClient&) = delete;
  MqttClient& operator=(const MqttClient&) = delete;
  ~MqttClient();

  /// Starts connecting (and keeps trying); fails only on what can never work.
  [[nodiscard]] protocol::Result<protocol::Done> start(MqttSettings settings);
  /// Publishes `last` if it can (a retained "offline" status, say), then
  /// disconnects cleanly; when it cannot, the connection is dropped so the
  /// broker sends the will. Safe to call twice.
  void stop(const std::optional<MqttMessage>& last = std::nullopt);

  /// Queues a message. With `replace`, a message still queued on the same
  /// topic is replaced (where it stands) instead of queueing another.
  void publish(MqttMessage message, bool replace = false);

  [[nodiscard]] bool connected() const noexcept { return state_ == State::Connected; }
  [[nodiscard]] const MqttCounters& counters() const noexcept { return counters_; }
  [[nodiscard]] std::size_t queued() const noexcept { return queue_.size(); }
  /// "127.0.0.1:1883", as the logs name it.
  [[nodiscard]] std::string broker() const;
  /// The user name it logs in with; empty: none.
  [[nodiscard]] const std::string& user() const noexcept { return settings_.username; }

 private:
  enum class State : std::uint8_t { Idle, Resolving, Connecting, Connected, Waiting, Stopped };

  /// A new libmosquitto client with the settings (the old one, if any, destroyed).
  [[nodiscard]] protocol::Result<protocol::Done> make_client();
  void resolve();
  void on_resolved(int error, const addrinfo* result);
  void connect_to(const std::string& address);
  void connection_failed(const std::string& reason);
  void retry_later();
  /// Runs after every call into libmosquitto: follows its socket, hands the
  /// Host what happened, and feeds the queue to the connection.
  void after_library_call();
  void watch_socket();
  void pump();
  void on_poll(int status, int events);
  void on_tick();
  /// A libmosquitto result: a connection lost inside it shows up as a closed socket.
  void check(int rc, const char* what);

  static void on_connect(mosquitto* mosq, void* self, int rc);
  static void on_disconnect(mosquitto* mosq, void* self, int rc);
  static void on_message(mosquitto* mosq, void* self, const mosquitto_message* message);
  static void on_publish(mosquitto* mosq, void* self, int mid);
  static void on_subscribe(mosquitto* mosq, void* self, int mid, int count, const int* granted);

  uv_loop_t* loop_;
  Host& host_;
  MqttSettings settings_;
  mosquitto* mosq_ = nullptr;
  State state_ = State::Idle;
  std::chrono::milliseconds backoff_{0};
  std::size_t address_turn_ = 0;  ///< which of the resolved addresses to try next
  std::string address_;
  HostLookup lookup_;  ///< the broker's name, looked up at each connection
  UvHandle<uv_poll_t> poll_;
  int polled_fd_ = -1;
  int polled_events_ = 0;
  UvHandle<uv_timer_t> retry_timer_;
  UvHandle<uv_timer_t> tick_timer_;
  MqttCounters counters_;
  std::deque<MqttMessage> queue_;
  std::set<int> in_flight_;  ///< message ids handed to libmosquitto and not yet sent (QoS 0) or acknowledged

  // What libmosquitto's callbacks saw, for after it returns.
  bool just_connected_ = false;
  bool just_subscribed_ = false;
  std::set<int> subscribing_;  ///< subscriptions the broker has not acknowledged yet
  std::optional<std::string> lost_;
  std::vector<MqttMessage> received_;
  std::string last_failure_;  ///< logged once until it changes
};

}  // namespace flockbridge::bridge
