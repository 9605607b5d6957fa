#include "flockbridge/bridge/session.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/wire.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge {
namespace {

/// The most messages handed to one uv_write.
constexpr std::size_t kWriteBatch = 64;

/// One read buffer serves every session of the loop: libuv calls a stream's
/// read callback right after its allocation callback, and the session has
/// consumed the bytes (into its decoder) before the callback returns.
thread_local std::array<char, std::size_t{64} * 1024> t_read_buffer;

/// A write request owns the buffers it writes until its callback runs.
struct WriteRequest {
  uv_write_t request{};
  std::vector<SharedBuffer> messages;
  std::vector<uv_buf_t> buffers;
};

std::string peer_name(const uv_tcp_t* tcp) {
  sockaddr_storage address{};
  int length = sizeof(address);
  if (uv_tcp_getpeername(tcp, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "unknown peer";
  std::array<char, 64> host{};
  if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    uv_ip6_name(v6, host.data(), host.size());
    return "[" + std::string(host.data()) + "]:" + std::to_string(ntohs(v6->sin6_port));
  }
  const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
  uv_ip4_name(v4, host.data(), host.size());
  return std::string(host.data()) + ":" + std::to_string(ntohs(v4->sin_port));
}

bool is_blank(protocol::ByteView line) {
  return std::all_of(line.begin(), line.end(), [](protocol::Byte b) { return b == ' ' || b == '\t'; });
}

}  // namespace

std::string_view client_kind_name(ClientKind kind) noexcept {
  return kind == ClientKind::Binary ? "binary" : "json";
}

Session::Session(uv_loop_t* loop, Host& host, std::uint64_t id, ClientKind kind, const Config& config,
                 protocol::BridgeCounters& counters)
    : loop_(loop),
      host_(host),
      id_(id),
      kind_(kind),
      config_(config),
      counters_(counters),
      decoder_(kind == ClientKind::Binary ? protocol::MessageDecoder::Framing::LengthPrefixed
                                          : protocol::MessageDecoder::Framing::Lines,
               kind == ClientKind::Binary ? 255 : config.max_line),
      queue_(config.queue_limit),
      limiter_(config.command_rate, config.command_burst) {}

Session::~Session() {
  tcp_.reset();
}

int Session::accept(uv_stream_t* server) {
  int rc = tcp_.init(this, [this](uv_tcp_t* t) { return uv_tcp_init(loop_, t); });
  if (rc < 0) return rc;
  rc = uv_accept(server, reinterpret_cast<uv_stream_t*>(tcp_.get()));
  if (rc < 0) return rc;
  peer_ = peer_name(tcp_.get());
  uv_tcp_nodelay(tcp_.get(), 1);
  watch_for_dead_peer();
  if (config_.client_send_buffer > 0) {
    // A small send buffer keeps a slow client's data fresh: what the kernel
    // holds cannot be replaced by newer sensor values, what we hold can.
    int size = config_.client_send_buffer;
    uv_send_buffer_size(reinterpret_cast<uv_handle_t*>(tcp_.get()), &size);
  }
  return 0;
}

void Session::watch_for_dead_peer() {
  // A client whose network vanished sends no FIN. Keepalive probes find an
  // idle one, TCP_USER_TIMEOUT one that leaves data unacknowledged; both
  // within about config_.dead_peer_timeout.
  uv_os_fd_t fd = -1;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(tcp_.get()), &fd) != 0) return;
  const auto timeout_ms = static_cast<int>(config_.dead_peer_timeout.count());
  const int idle_s = std::max(1, timeout_ms / 2000);
  const int interval_s = std::max(1, timeout_ms / 10000);
  const int probes = std::max(1, (timeout_ms / 1000 - idle_s) / interval_s);
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof(idle_s));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof(interval_s));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
  const auto user_timeout = static_cast<unsigned>(timeout_ms);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
}

void Session::start(SharedBuffer greeting) {
  if (kind_ == ClientKind::Json) subscribe(0);
  if (greeting) send(std::move(greeting));
  const int rc = uv_read_start(
      reinterpret_cast<uv_stream_t*>(tcp_.get()),
      [](uv_handle_t*, std::size_t, uv_buf_t* buf) {
        *buf = uv_buf_init(t_read_buffer.data(), static_cast<unsigned>(t_read_buffer.size()));
      },
      [](uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
        if (auto* self = owner_of<Session>(stream)) self->on_read(nread, buf);
      });
  if (rc < 0) close("cannot read: " + uv_error_text(rc));
}

void Session::refuse(SharedBuffer refusal) {
  refusing_ = true;
  send(std::move(refusal));
}

void Session::close(std::string_view reason, CloseKind kind) {
  if (closing_) return;
  closing_ = true;
  switch (kind) {
    case CloseKind::Normal:
      break;
    case CloseKind::Stalled:
      ++counters_.clients_closed_stalled;
      break;
    case CloseKind::Behind:
      ++counters_.clients_closed_behind;
      break;
    case CloseKind::Dead:
      ++counters_.clients_dead;
      break;
  }
  tcp_.reset();
  log_info("client " + std::to_string(id_) + " (" + std::string(client_kind_name(kind_)) + ", " + peer_ +
           ") closed: " + std::string(reason));
  host_.session_closed(*this);
}

void Session::on_read(ssize_t nread, const uv_buf_t* buf) {
  if (nread == UV_EOF) {
    // The client has finished sending (it may still read, as `echo ... | nc`
    // does): answer what it sent, then close.
    input_closed_ = true;
    subscribed_ = false;
    uv_read_stop(reinterpret_cast<uv_stream_t*>(tcp_.get()));
    finish_if_done();
    return;
  }
  if (nread < 0) {
    // ETIMEDOUT (keepalive or user timeout), ECONNRESET and the like: the
    // client's side is gone.
    close("connection lost: " + uv_error_text(static_cast<int>(nread)), CloseKind::Dead);
    return;
  }
  decoder_.feed(protocol::ByteView(reinterpret_cast<const protocol::Byte*>(buf->base), static_cast<std::size_t>(nread)),
                steady_now());
  while (!closing_) {
    const auto event = decoder_.next();
    if (!event) break;
    if (event->kind == protocol::MessageDecoder::EventKind::TooLong) {
      reply_error(nullptr,
                  protocol::Error{"line longer than " + std::to_string(config_.max_line) + " bytes; discarded"});
      continue;
    }
    handle_message(event->body);
  }
}

void Session::handle_message(protocol::ByteView body) {
  if (kind_ == ClientKind::Binary) {
    auto request = protocol::parse_binary_request(body);
    if (!request) {
      reply_error(nullptr, request.error());
      return;
    }
    host_.session_request(*this, std::move(request).value(), nullptr);
    return;
  }
  if (is_blank(body)) return;
  auto parsed =
      protocol::json::parse_request(std::string_view(reinterpret_cast<const char*>(body.data()), body.size()));
  if (!parsed.request) {
    reply_error(parsed.id, parsed.request.error());
    return;
  }
  host_.session_request(*this, std::move(parsed.request).value(), parsed.id);
}

void Session::send(SharedBuffer message) {
  if (closing_ || !message) return;
  if (!queue_.push(std::move(message))) {
    close("too far behind: " + std::to_string(queue_.size()) + " messages waiting", CloseKind::Behind);
    return;
  }
  flush();
}

void Session::send_sensor(SharedBuffer message, SteadyTime now) {
  if (closing_) return;
  last_sensor_ = now;
  ++counters_.sensor_messages_sent;
  if (queue_.push_sensor(std::move(message))) ++counters_.sensor_messages_dropped;
  flush();
}

bool Session::wants_sensor(SteadyTime now) const noexcept {
  return subscribed_ && !closing_ && !refusing_ && (interval_.count() == 0 || now - last_sensor_ >= interval_);
}

void Session::subscribe(std::uint32_t interval_ms) {
  subscribed_ = true;
  interval_ = std::chrono::milliseconds{interval_ms};
  last_sensor_ = {};
}

void Session::reply_ok(const nlohmann::json& id, bool acknowledged) {
  send(wire::ok(kind_, id, acknowledged));
}

void Session::reply_error(const nlohmann::json& id, const protocol::Error& error) {
  ++counters_.failed[static_cast<std::size_t>(error.code)];
  log_debug("client " + std::to_string(id_) + ": " + error.message);
  send(wire::error(kind_, id, error));
}

protocol::ClientSnapshot Session::snapshot() const {
  return {id_, std::string(client_kind_name(kind_)), peer_, commands_, queue_.dropped_total(), queue_.size()};
}

void Session::flush() {
  auto* stream = reinterpret_cast<uv_stream_t*>(tcp_.get());
  while (!writing_ && !closing_ && !queue_.empty()) {
    std::vector<SharedBuffer> messages;
    if (const std::uint64_t dropped = queue_.take_dropped(); dropped > 0)
      messages.push_back(wire::dropped(kind_, dropped));
    for (SharedBuffer& message : queue_.take(kWriteBatch)) messages.push_back(std::move(message));
    std::vector<uv_buf_t> buffers;
    buffers.reserve(messages.size());
    for (const SharedBuffer& message : messages) {
      buffers.push_back(uv_buf_init(const_cast<char*>(message->data()), static_cast<unsigned>(message->size())));
    }

    // Straight into the kernel when it has room: a client that keeps up then
    // never has a write in flight, so latest-wins only ever drops messages
    // for clients that really are behind.
    const int written = uv_try_write(stream, buffers.data(), static_cast<unsigned>(buffers.size()));
    if (written < 0 && written != UV_EAGAIN) {
      close("write failed: " + uv_error_text(written), CloseKind::Dead);
      return;
    }
    std::size_t skip = written > 0 ? static_cast<std::size_t>(written) : 0;
    std::size_t first = 0;
    while (first < buffers.size() && skip >= buffers[first].len) skip -= buffers[first++].len;
    if (first == buffers.size()) continue;  // all of it went out
    buffers[first].base += skip;
    buffers[first].len -= static_cast<decltype(buffers[first].len)>(skip);

    // The rest waits for the socket; the request owns its buffers until its callback.
    auto* write = new WriteRequest;
    write->request.data = write;
    write->messages = std::move(messages);
    write->buffers.assign(buffers.begin() + static_cast<std::ptrdiff_t>(first), buffers.end());
    const int rc = uv_write(&write->request, stream, write->buffers.data(),
                            static_cast<unsigned>(write->buffers.size()), [](uv_write_t* request, int status) {
                              auto* done = static_cast<WriteRequest*>(request->data);
                              auto* self = owner_of<Session>(request->handle);
                              delete done;
                              if (self != nullptr) self->on_write_done(status);
                            });
    if (rc < 0) {
      delete write;
      close("write failed: " + uv_error_text(rc), CloseKind::Dead);
      return;
    }
    writing_ = true;
    write_started_ = steady_now();
  }
  if (refusing_ && !writing_ && queue_.empty()) close("refused: too many clients");
}

void Session::on_write_done(int status) {
  writing_ = false;
  if (status < 0) {
    close("write failed: " + uv_error_text(status), CloseKind::Dead);
    return;
  }
  flush();
  finish_if_done();
}

void Session::command_finished() {
  if (pending_commands_ > 0) --pending_commands_;
  finish_if_done();
}

void Session::finish_if_done() {
  if (input_closed_ && !closing_ && !writing_ && queue_.empty() && pending_commands_ == 0) close("disconnected");
}

void Session::housekeeping(SteadyTime now) {
  if (closing_) return;
  if (writing_ && now - write_started_ >= config_.stall_timeout) {
    close("not reading: a write has waited " +
              std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now - write_started_).count()) +
              " ms",
          CloseKind::Stalled);
    return;
  }
  const std::size_t waiting = decoder_.buffered();
  if (decoder_.expire(now, config_.message_timeout)) {
    reply_error(nullptr, protocol::Error{"incomplete message discarded: " + std::to_string(waiting) +
                                         " bytes did not make a whole message within " +
                                         std::to_string(config_.message_timeout.count()) + " ms"});
  }
}

}  // namespace flockbridge::bridge
