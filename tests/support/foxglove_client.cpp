#include "support/foxglove_client.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <stdexcept>
#include <utility>

namespace flockbridge::testing {
namespace {

using nlohmann::json;

template <typename T>
T little_endian(const std::string& bytes, std::size_t at) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    value |= static_cast<T>(static_cast<std::uint8_t>(bytes[at + i])) << (8 * i);
  }
  return value;
}

std::chrono::milliseconds left_until(std::chrono::steady_clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
}

void expect(bool holds, const std::string& what) {
  if (!holds) throw std::runtime_error("the Foxglove live view broke its protocol: " + what);
}

}  // namespace

FoxgloveClient::FoxgloveClient(std::uint16_t port, const std::string& origin, int receive_buffer)
    : ws_(port, "/", receive_buffer, origin, kSubprotocol) {
  // As a browser's WebSocket (Foxglove's app): its small messages one after
  // another (subscribe, advertise, a command) are not held back for the
  // acknowledgement of the one before (Nagle's algorithm).
  const int on = 1;
  ::setsockopt(ws_.tcp().fd(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

bool FoxgloveClient::open(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto info = ws_.read_message(timeout);
  if (!info || info->opcode != WebSocketClient::Text) return false;
  server_info = json::parse(info->payload);
  if (server_info["op"] != "serverInfo") return false;
  auto advertised = ws_.read_message(left_until(deadline));
  if (!advertised || advertised->opcode != WebSocketClient::Text) return false;
  const json advertise = json::parse(advertised->payload);
  if (advertise["op"] != "advertise") return false;
  for (const json& channel : advertise["channels"]) channels[channel["topic"].get<std::string>()] = channel;
  return true;
}

void FoxgloveClient::subscribe(std::uint32_t id, const std::string& topic) {
  ws_.send_json({{"op", "subscribe"}, {"subscriptions", {{{"id", id}, {"channelId", channels.at(topic)["id"]}}}}});
  topic_of_[id] = topic;
}

void FoxgloveClient::advertise(std::uint32_t id, const std::string& topic, const std::string& encoding) {
  ws_.send_json({{"op", "advertise"},
                 {"channels", {{{"id", id}, {"topic", topic}, {"encoding", encoding}, {"schemaName", "command"}}}}});
}

void FoxgloveClient::publish(std::uint32_t channel, const std::string& payload) {
  std::string frame(1, '\x01');
  for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>((channel >> (8 * i)) & 0xFF));
  frame += payload;
  ws_.send_frame(WebSocketClient::Binary, frame, true);
}

std::optional<FoxgloveClient::Data> FoxgloveClient::next(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto message = ws_.read_message(std::max(left_until(deadline), std::chrono::milliseconds(0)));
    if (!message) return std::nullopt;
    if (message->opcode == WebSocketClient::Text) {
      // Nothing but status messages comes after advertise.
      json text = json::parse(message->payload);
      expect(text["op"] == "status" && text["level"].is_number_integer() && text["message"].is_string(),
             "a text message after advertise that is no status: " + message->payload);
      statuses.push_back(std::move(text));
      continue;
    }
    expect(message->opcode == WebSocketClient::Binary, "a frame neither text nor binary");
    const std::string& bytes = message->payload;
    expect(bytes.size() > 13 && static_cast<std::uint8_t>(bytes[0]) == 1, "a binary frame that is no message data");
    Data data{little_endian<std::uint32_t>(bytes, 1), little_endian<std::uint64_t>(bytes, 5),
              json::parse(bytes.substr(13))};
    expect(topic_of_.contains(data.subscription),
           "a message on subscription " + std::to_string(data.subscription) + ", which was never made");
    return data;
  }
}

std::optional<FoxgloveClient::Data> FoxgloveClient::next_on(const std::string& topic,
                                                            std::chrono::milliseconds timeout) {
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (topic_of(it->subscription) == topic) {
      Data data = std::move(*it);
      waiting_.erase(it);
      return data;
    }
  }
  return read_until(
      timeout, [this](std::chrono::milliseconds left) { return next(left); },
      [&](const Data& data) {
        const std::string on = topic_of(data.subscription);
        if (on == topic) return true;
        // A sensor message waits for nobody: at 100 a second, keeping them would only fill memory.
        if (on != "/sensor") waiting_.push_back(data);
        return false;
      });
}

std::optional<json> FoxgloveClient::read_json(std::chrono::milliseconds timeout) {
  if (!waiting_.empty()) {
    json message = std::move(waiting_.front().message);
    waiting_.pop_front();
    return message;
  }
  auto data = next(timeout);
  if (!data) return std::nullopt;
  return std::move(data->message);
}

std::optional<json> FoxgloveClient::read_json_type(const std::string& type, std::chrono::milliseconds timeout) {
  return read_until(
      timeout, [this](std::chrono::milliseconds left) { return read_json(left); },
      [&](const json& message) { return message["type"] == type; });
}

std::string FoxgloveClient::topic_of(std::uint32_t subscription) const {
  const auto found = topic_of_.find(subscription);
  return found != topic_of_.end() ? found->second : std::string();
}

}  // namespace flockbridge::testing
