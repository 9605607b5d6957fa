#include "support/web_client.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <random>
#include <stdexcept>
#include <utility>

namespace flockbridge::testing {
namespace {

/// RFC 6455's sample nonce and the accept value the RFC gives for it (section 1.3).
constexpr const char* kKey = "dGhlIHNhbXBsZSBub25jZQ==";
constexpr const char* kAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

/// Splits "HTTP/1.1 200 OK\r\nName: value\r\n..." into the status and headers.
void parse_head(const std::string& head, int& status, std::map<std::string, std::string>& headers) {
  std::size_t line_end = head.find("\r\n");
  const std::string status_line = head.substr(0, line_end);
  const std::size_t space = status_line.find(' ');
  status = space == std::string::npos ? 0 : std::atoi(status_line.c_str() + space + 1);
  while (line_end != std::string::npos && line_end + 2 < head.size()) {
    const std::size_t start = line_end + 2;
    line_end = head.find("\r\n", start);
    const std::string line = head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    headers[lower(line.substr(0, colon))] = value;
  }
}

/// The head of the server's answer, up to and with its blank line, taken
/// from the client's buffer; nothing when the connection ends or the deadline
/// passes first.
std::optional<std::string> read_head(TcpClient& client, std::chrono::steady_clock::time_point deadline) {
  std::size_t end = std::string::npos;
  while ((end = client.buffer().find("\r\n\r\n")) == std::string::npos) {
    if (!client.fill(deadline)) return std::nullopt;
  }
  std::string head = client.buffer().substr(0, end + 4);
  client.buffer().erase(0, end + 4);
  return head;
}

}  // namespace

std::optional<HttpResponse> http_get(std::uint16_t port, const std::string& path, std::chrono::milliseconds timeout) {
  TcpClient client(port);
  client.send("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\nConnection: close\r\n\r\n");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto head = read_head(client, deadline);
  if (!head) return std::nullopt;
  HttpResponse response;
  parse_head(*head, response.status, response.headers);
  const auto length = response.headers.find("content-length");
  if (length != response.headers.end()) {
    const auto want = static_cast<std::size_t>(std::stoul(length->second));
    while (client.buffer().size() < want) {
      if (!client.fill(deadline)) return std::nullopt;
    }
    response.body = client.buffer().substr(0, want);
  } else {
    while (client.fill(deadline)) {
    }
    if (!client.eof()) return std::nullopt;
    response.body = client.buffer();
  }
  return response;
}

WebSocketClient::WebSocketClient(std::uint16_t port, const std::string& path, int receive_buffer,
                                 const std::string& origin, const std::string& subprotocol)
    : tcp_(port, receive_buffer) {
  tcp_.send("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
            (origin.empty() ? "" : "\r\nOrigin: " + origin) +
            (subprotocol.empty() ? "" : "\r\nSec-WebSocket-Protocol: " + subprotocol) +
            "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + kKey +
            "\r\nSec-WebSocket-Version: 13\r\n\r\n");
  auto head = read_head(tcp_, std::chrono::steady_clock::now() + 5s);
  if (!head) return;  // refused: the connection closed without an answer
  response_ = std::move(*head);
  int status = 0;
  std::map<std::string, std::string> headers;
  parse_head(response_, status, headers);
  accepted_ = status == 101 && headers["sec-websocket-accept"] == kAccept && lower(headers["upgrade"]) == "websocket" &&
              (subprotocol.empty() || headers["sec-websocket-protocol"] == subprotocol);
}

void WebSocketClient::send_frame(Opcode opcode, const std::string& payload, bool fin) {
  static std::mt19937 random(std::random_device{}());
  std::string frame;
  frame.push_back(static_cast<char>((fin ? 0x80 : 0x00) | opcode));
  const std::size_t length = payload.size();
  if (length < 126) {
    frame.push_back(static_cast<char>(0x80 | length));
  } else if (length <= 0xFFFF) {
    frame.push_back(static_cast<char>(0x80 | 126));
    frame.push_back(static_cast<char>(length >> 8));
    frame.push_back(static_cast<char>(length & 0xFF));
  } else {
    frame.push_back(static_cast<char>(0x80 | 127));
    for (int shift = 56; shift >= 0; shift -= 8) frame.push_back(static_cast<char>((length >> shift) & 0xFF));
  }
  std::array<char, 4> mask{};
  for (char& m : mask) m = static_cast<char>(random() & 0xFF);
  frame.append(mask.data(), mask.size());
  for (std::size_t i = 0; i < length; ++i) frame.push_back(static_cast<char>(payload[i] ^ mask[i % 4]));
  tcp_.send(frame);
}

void WebSocketClient::close(int code) {
  std::string payload;
  payload.push_back(static_cast<char>((code >> 8) & 0xFF));
  payload.push_back(static_cast<char>(code & 0xFF));
  send_frame(Close, payload, true);
}

std::optional<WebSocketClient::Frame> WebSocketClient::read_frame(std::chrono::steady_clock::time_point deadline) {
  std::string& buffer = tcp_.buffer();
  for (;;) {
    if (buffer.size() >= 2) {
      const auto b0 = static_cast<std::uint8_t>(buffer[0]);
      const auto b1 = static_cast<std::uint8_t>(buffer[1]);
      if ((b1 & 0x80) != 0) throw std::runtime_error("the server masked a frame (RFC 6455 5.1 forbids it)");
      std::size_t length = b1 & 0x7F;
      std::size_t header = 2;
      if (length == 126) header = 4;
      if (length == 127) header = 10;
      if (buffer.size() >= header) {
        if (length >= 126) {
          length = 0;
          for (std::size_t i = 2; i < header; ++i) length = (length << 8) | static_cast<std::uint8_t>(buffer[i]);
        }
        if (buffer.size() >= header + length) {
          Frame frame{(b0 & 0x80) != 0, static_cast<std::uint8_t>(b0 & 0x0F), buffer.substr(header, length)};
          buffer.erase(0, header + length);
          return frame;
        }
      }
    }
    if (!tcp_.fill(deadline)) return std::nullopt;
  }
}

std::optional<std::string> WebSocketClient::read_text(std::chrono::milliseconds timeout) {
  auto message = read_message(timeout);
  if (!message) return std::nullopt;
  return std::move(message->payload);
}

std::optional<WebSocketClient::Message> WebSocketClient::read_message(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!closed_) {
    auto frame = read_frame(deadline);
    if (!frame) return std::nullopt;
    switch (frame->opcode) {
      case Ping:
        send_frame(Pong, frame->payload, true);
        continue;
      case Pong:
        continue;
      case Close:
        closed_ = true;
        if (frame->payload.size() >= 2) {
          close_code_ =
              (static_cast<std::uint8_t>(frame->payload[0]) << 8) | static_cast<std::uint8_t>(frame->payload[1]);
          close_reason_ = frame->payload.substr(2);
        }
        // Answer with a close of our own, as RFC 6455 (5.5.1) asks.
        try {
          send_frame(Close, frame->payload.substr(0, 2), true);
        } catch (const std::exception&) {
          // The server may have closed the socket already.
        }
        return std::nullopt;
      default:
        if (frame->opcode != Continuation) partial_opcode_ = static_cast<Opcode>(frame->opcode);
        partial_ += frame->payload;
        if (frame->fin) return Message{partial_opcode_, std::exchange(partial_, std::string())};
    }
  }
  return std::nullopt;
}

std::optional<nlohmann::json> WebSocketClient::read_json(std::chrono::milliseconds timeout) {
  auto text = read_text(timeout);
  if (!text) return std::nullopt;
  return nlohmann::json::parse(*text);
}

std::optional<nlohmann::json> WebSocketClient::read_json_type(const std::string& type,
                                                              std::chrono::milliseconds timeout) {
  return read_until(
      timeout, [this](std::chrono::milliseconds left) { return read_json(left); },
      [&](const nlohmann::json& message) { return message["type"] == type; });
}

bool WebSocketClient::wait_closed(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!closed_ && !tcp_.eof()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    (void)read_text(left);
  }
  return true;
}

}  // namespace flockbridge::testing
