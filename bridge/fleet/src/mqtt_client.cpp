#include "flockbridge/bridge/mqtt_client.hpp"

#include <mosquitto.h>
#include <mqtt_protocol.h>

#include <netdb.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <random>

#include "flockbridge/bridge/log.hpp"

namespace flockbridge::bridge {
namespace {

using protocol::Done;
using protocol::Error;
using protocol::Result;

/// Messages handed to libmosquitto and not yet written (QoS 0) or
/// acknowledged (QoS 1): beyond it, libmosquitto would queue them itself,
/// without a bound.
constexpr std::size_t kInFlightLimit = 16;
constexpr std::uint64_t kTickMs = 1000;

/// Whether a topic filter may be subscribed to as given: no empty name.
bool valid_topic(const std::string& topic) {
  return !topic.empty() && topic.size() <= 65535;
}

std::string library_error(int rc) {
  if (rc == MOSQ_ERR_ERRNO) return std::strerror(errno);
  return mosquitto_strerror(rc);
}

}  // namespace

MqttClient::MqttClient(uv_loop_t* loop, Host& host) : loop_(loop), host_(host) {}

MqttClient::~MqttClient() {
  stop();
}

std::string MqttClient::broker() const {
  const std::string& host = address_.empty() ? settings_.host : address_;
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(settings_.port);
}

Result<Done> MqttClient::start(MqttSettings settings) {
  static const int initialised = mosquitto_lib_init();
  if (initialised != MOSQ_ERR_SUCCESS) return Error{"mqtt: cannot initialise libmosquitto"};
  settings_ = std::move(settings);
  if (settings_.host.empty()) return Error{"mqtt: no broker is set (mqtt.host)"};
  for (const std::string& topic : settings_.subscriptions) {
    if (!valid_topic(topic)) return Error{"mqtt: cannot subscribe to \"" + topic + "\""};
  }
  if (auto made = make_client(); !made) return made.error();
  const auto make_timer = [this](uv_timer_t* t) { return uv_timer_init(loop_, t); };
  if (retry_timer_.init(this, make_timer) < 0 || tick_timer_.init(this, make_timer) < 0) {
    return Error{"mqtt: cannot create the loop's timers"};
  }
  uv_timer_start(
      tick_timer_.get(),
      [](uv_timer_t* timer) {
        if (auto* self = owner_of<MqttClient>(timer)) self->on_tick();
      },
      kTickMs, kTickMs);
  backoff_ = settings_.reconnect_min;
  resolve();
  return Done{};
}

Result<Done> MqttClient::make_client() {
  if (mosq_ != nullptr) {
    poll_.reset();
    polled_fd_ = -1;
    mosquitto_destroy(mosq_);
  }
  mosq_ = mosquitto_new(settings_.client_id.c_str(), true, this);
  if (mosq_ == nullptr) return Error{"mqtt: cannot create a client (" + std::string(std::strerror(errno)) + ")"};
  mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
  mosquitto_int_option(mosq_, MOSQ_OPT_TCP_NODELAY, 1);
  if (!settings_.username.empty()) {
    const int rc = mosquitto_username_pw_set(mosq_, settings_.username.c_str(),
                                             settings_.password.empty() ? nullptr : settings_.password.c_str());
    if (rc != MOSQ_ERR_SUCCESS) return Error{"mqtt: cannot set the user name: " + library_error(rc)};
  }
  if (settings_.will) {
    const MqttMessage& will = *settings_.will;
    const int rc = mosquitto_will_set(mosq_, will.topic.c_str(), static_cast<int>(will.payload.size()),
                                      will.payload.data(), will.qos, will.retain);
    if (rc != MOSQ_ERR_SUCCESS) return Error{"mqtt: cannot set the last will: " + library_error(rc)};
  }
  mosquitto_connect_callback_set(mosq_, &MqttClient::on_connect);
  mosquitto_disconnect_callback_set(mosq_, &MqttClient::on_disconnect);
  mosquitto_message_callback_set(mosq_, &MqttClient::on_message);
  mosquitto_publish_callback_set(mosq_, &MqttClient::on_publish);
  mosquitto_subscribe_callback_set(mosq_, &MqttClient::on_subscribe);
  in_flight_.clear();
  return Done{};
}

void MqttClient::stop(const std::optional<MqttMessage>& last) {
  if (state_ == State::Stopped) return;
  const bool was_connected = state_ == State::Connected;
  state_ = State::Stopped;
  lookup_.cancel();
  if (mosq_ != nullptr) {
    if (was_connected) {
      bool written = true;
      if (last) {
        mosquitto_publish(mosq_, nullptr, last->topic.c_str(), static_cast<int>(last->payload.size()),
                          last->payload.data(), last->qos, last->retain);
        // The socket does not block: what the kernel takes now is all there is.
        mosquitto_loop_write(mosq_, 1);
        written = !mosquitto_want_write(mosq_);
      }
      // A clean disconnect tells the broker not to send the will: only when
      // the last message went out.
      if (written) {
        mosquitto_disconnect(mosq_);
        mosquitto_loop_write(mosq_, 1);
      }
    }
    poll_.reset();
    polled_fd_ = -1;
    mosquitto_destroy(mosq_);
    mosq_ = nullptr;
  }
  retry_timer_.reset();
  tick_timer_.reset();
  queue_.clear();
  in_flight_.clear();
}

void MqttClient::publish(MqttMessage message, bool replace) {
  if (state_ == State::Stopped || mosq_ == nullptr) return;
  if (replace) {
    const auto same = std::ranges::find_if(queue_, [&](const MqttMessage& m) { return m.topic == message.topic; });
    if (same != queue_.end()) {
      *same = std::move(message);
      ++counters_.replaced;
      return;
    }
  }
  if (queue_.size() >= settings_.queue_limit) {
    queue_.pop_front();
    ++counters_.dropped;
  }
  queue_.push_back(std::move(message));
  pump();
  watch_socket();
}

void MqttClient::resolve() {
  state_ = State::Resolving;
  std::string why;
  if (!lookup_.start(
          loop_, settings_.host, "", [this](int error, const addrinfo* result) { on_resolved(error, result); }, why)) {
    connection_failed("cannot look up " + settings_.host + ": " + why);
  }
}

void MqttClient::on_resolved(int error, const addrinfo* result) {
  if (error != 0) {
    connection_failed("cannot look up " + settings_.host + ": " + ::gai_strerror(error));
    return;
  }
  std::vector<std::string> addresses;
  for (const addrinfo* each = result; each != nullptr; each = each->ai_next) {
    std::array<char, 64> text{};
    int named = -1;
    if (each->ai_family == AF_INET) {
      named = uv_ip4_name(reinterpret_cast<const sockaddr_in*>(each->ai_addr), text.data(), text.size());
    } else if (each->ai_family == AF_INET6) {
      named = uv_ip6_name(reinterpret_cast<const sockaddr_in6*>(each->ai_addr), text.data(), text.size());
    }
    if (named == 0 && std::ranges::find(addresses, std::string(text.data())) == addresses.end()) {
      addresses.emplace_back(text.data());
    }
  }
  if (addresses.empty()) {
    connection_failed("no address for " + settings_.host);
    return;
  }
  // Each attempt tries the next address, so one that does not answer is not tried forever.
  connect_to(addresses[address_turn_++ % addresses.size()]);
}

void MqttClient::connect_to(const std::string& address) {
  address_ = address;
  state_ = State::Connecting;
  lost_.reset();
  // A client of its own for each attempt: nothing of a lost or failed
  // connection (its unsent packets, its unacknowledged messages) carries
  // over; what the broker must hear again (status, telemetry) is published
  // again once connected.
  if (auto made = make_client(); !made) {
    connection_failed(made.error().message);
    return;
  }
  const int rc =
      mosquitto_connect_async(mosq_, address.c_str(), settings_.port, static_cast<int>(settings_.keepalive.count()));
  if (rc != MOSQ_ERR_SUCCESS) {
    connection_failed("cannot connect to " + broker() + ": " + library_error(rc));
    return;
  }
  after_library_call();
}

void MqttClient::connection_failed(const std::string& reason) {
  ++counters_.connect_failures;
  if (reason != last_failure_) {
    log_warning("mqtt: " + reason + "; trying again (every " + std::to_string(settings_.reconnect_max.count() / 1000) +
                " s at most)");
    last_failure_ = reason;
  } else {
    log_debug("mqtt: " + reason);
  }
  retry_later();
}

void MqttClient::retry_later() {
  if (state_ == State::Stopped) return;
  state_ = State::Waiting;
  poll_.reset();
  polled_fd_ = -1;
  // A quarter of jitter either way keeps a class's bridges from coming back in step.
  static std::minstd_rand random{std::random_device{}()};
  std::uniform_real_distribution<double> spread(0.75, 1.25);
  const auto wait = static_cast<std::uint64_t>(static_cast<double>(backoff_.count()) * spread(random));
  backoff_ = std::min(backoff_ * 2, settings_.reconnect_max);
  uv_timer_start(
      retry_timer_.get(),
      [](uv_timer_t* timer) {
        if (auto* self = owner_of<MqttClient>(timer)) self->resolve();
      },
      wait, 0);
}

void MqttClient::check(int rc, const char* what) {
  if (rc == MOSQ_ERR_SUCCESS || rc == MOSQ_ERR_NO_CONN || rc == MOSQ_ERR_CONN_LOST) return;
  log_debug(std::string("mqtt: ") + what + ": " + library_error(rc));
}

void MqttClient::after_library_call() {
  if (state_ == State::Stopped) return;
  if (just_connected_) {
    just_connected_ = false;
    state_ = State::Connected;
    backoff_ = settings_.reconnect_min;
    last_failure_.clear();
    ++counters_.connects;
    in_flight_.clear();
    subscribing_.clear();
    for (const std::string& topic : settings_.subscriptions) {
      int mid = 0;
      check(mosquitto_subscribe_v5(mosq_, &mid, topic.c_str(), 1, MQTT_SUB_OPT_RETAIN_AS_PUBLISHED, nullptr),
            "subscribe");
      subscribing_.insert(mid);
    }
    // Said once the broker has the subscriptions too: from then on nothing
    // published for this robot is missed.
    if (subscribing_.empty()) just_subscribed_ = true;
    host_.mqtt_connected();
  }
  if (just_subscribed_) {
    just_subscribed_ = false;
    log_info("mqtt: connected to " + broker() + " as " + settings_.client_id + " (MQTT 5, " +
             (settings_.username.empty() ? "no user name" : "user " + settings_.username) + ")" +
             (settings_.subscriptions.empty() ? "" : ", subscribed"));
  }
  if (!received_.empty()) {
    std::vector<MqttMessage> messages;
    messages.swap(received_);
    for (const MqttMessage& message : messages) host_.mqtt_message(message);
  }
  const bool active = state_ == State::Connected || state_ == State::Connecting;
  if (active && (lost_ || mosquitto_socket(mosq_) < 0)) {
    std::string reason = lost_.value_or("the connection closed");
    lost_.reset();
    if (state_ == State::Connected) {
      ++counters_.disconnects;
      log_warning("mqtt: lost the connection to " + broker() + ": " + reason + "; reconnecting");
      last_failure_.clear();
      retry_later();
    } else {
      connection_failed("cannot connect to " + broker() + ": " + reason);
    }
    return;
  }
  pump();
  watch_socket();
}

void MqttClient::pump() {
  if (state_ != State::Connected) return;
  while (!queue_.empty() && in_flight_.size() < kInFlightLimit && !mosquitto_want_write(mosq_)) {
    const MqttMessage& message = queue_.front();
    int mid = 0;
    const int rc = mosquitto_publish(mosq_, &mid, message.topic.c_str(), static_cast<int>(message.payload.size()),
                                     message.payload.data(), message.qos, message.retain);
    if (rc == MOSQ_ERR_NO_CONN || rc == MOSQ_ERR_CONN_LOST) return;  // kept for the next connection
    if (rc == MOSQ_ERR_SUCCESS) {
      ++counters_.published;
      // QoS 0 with the socket ready: written (and its callback run) already.
      if (mosquitto_want_write(mosq_) || message.qos > 0) in_flight_.insert(mid);
    } else {
      ++counters_.dropped;
      log_debug("mqtt: cannot publish on " + message.topic + ": " + library_error(rc));
    }
    queue_.pop_front();
  }
}

void MqttClient::watch_socket() {
  if (mosq_ == nullptr) return;
  const int fd = mosquitto_socket(mosq_);
  // A socket libmosquitto closed is never polled again: the next socket may
  // get the same number, and must be registered afresh.
  if (fd != polled_fd_ || fd < 0) {
    poll_.reset();
    polled_fd_ = -1;
    polled_events_ = 0;
    if (fd < 0) return;
    if (poll_.init(this, [this, fd](uv_poll_t* p) { return uv_poll_init_socket(loop_, p, fd); }) < 0) {
      log_warning("mqtt: cannot watch the broker's socket");
      return;
    }
    polled_fd_ = fd;
  }
  const int events = UV_READABLE | (mosquitto_want_write(mosq_) ? UV_WRITABLE : 0);
  if (events == polled_events_) return;
  polled_events_ = events;
  uv_poll_start(poll_.get(), events, [](uv_poll_t* handle, int status, int ready) {
    if (auto* self = owner_of<MqttClient>(handle)) self->on_poll(status, ready);
  });
}

void MqttClient::on_poll(int status, int events) {
  if (mosq_ == nullptr) return;
  if (status < 0) events = UV_READABLE | UV_WRITABLE;  // let libmosquitto find the error
  if ((events & UV_READABLE) != 0) check(mosquitto_loop_read(mosq_, 1), "read");
  if ((events & UV_WRITABLE) != 0 && mosquitto_socket(mosq_) >= 0) check(mosquitto_loop_write(mosq_, 1), "write");
  after_library_call();
}

void MqttClient::on_tick() {
  if (mosq_ == nullptr || (state_ != State::Connected && state_ != State::Connecting)) return;
  check(mosquitto_loop_misc(mosq_), "keepalive");
  after_library_call();
}

void MqttClient::on_connect(mosquitto* /*mosq*/, void* self, int rc) {
  auto* client = static_cast<MqttClient*>(self);
  if (rc == 0) {
    client->just_connected_ = true;
  } else if (rc == 1 || rc == MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION) {
    client->lost_ = "refused: the broker does not speak MQTT 5 (mosquitto 1.6 and later do)";
  } else {
    client->lost_ = std::string("refused: ") + (rc < 128 ? mosquitto_connack_string(rc) : mosquitto_reason_string(rc));
  }
}

void MqttClient::on_disconnect(mosquitto* /*mosq*/, void* self, int rc) {
  auto* client = static_cast<MqttClient*>(self);
  if (!client->lost_) client->lost_ = rc == 0 ? "disconnected" : library_error(rc);
}

void MqttClient::on_message(mosquitto* /*mosq*/, void* self, const mosquitto_message* message) {
  auto* client = static_cast<MqttClient*>(self);
  ++client->counters_.received;
  MqttMessage copy;
  copy.topic = message->topic;
  if (message->payloadlen > 0)
    copy.payload.assign(static_cast<const char*>(message->payload), static_cast<std::size_t>(message->payloadlen));
  copy.retain = message->retain;
  copy.qos = message->qos;
  client->received_.push_back(std::move(copy));
}

void MqttClient::on_publish(mosquitto* /*mosq*/, void* self, int mid) {
  static_cast<MqttClient*>(self)->in_flight_.erase(mid);
}

void MqttClient::on_subscribe(mosquitto* /*mosq*/, void* self, int mid, int /*count*/, const int* /*granted*/) {
  auto* client = static_cast<MqttClient*>(self);
  if (client->subscribing_.erase(mid) > 0 && client->subscribing_.empty()) client->just_subscribed_ = true;
}

}  // namespace flockbridge::bridge
