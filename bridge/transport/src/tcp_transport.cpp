#include "flockbridge/bridge/tcp_transport.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/serial_port.hpp"

namespace flockbridge::bridge {
namespace {

constexpr std::string_view kPrefix = "tcp:";

struct Connect {
  uv_connect_t request{};
  std::uint64_t attempt;
};

struct Write {
  uv_write_t request{};
  std::string bytes;
};

}  // namespace

std::optional<TcpAddress> parse_tcp_path(const std::string& path) {
  if (!path.starts_with(kPrefix)) return std::nullopt;
  const std::string rest = path.substr(kPrefix.size());
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) return std::nullopt;
  std::string host = rest.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port = rest.substr(colon + 1);
  if (!std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) || port.size() > 5) {
    return std::nullopt;
  }
  return TcpAddress{host, port};
}

std::unique_ptr<Transport> make_transport(uv_loop_t* loop, const Transport::Settings& settings,
                                          Transport::Listener& listener) {
  if (settings.path.starts_with(kPrefix)) return std::make_unique<TcpTransport>(loop, settings, listener);
  return std::make_unique<SerialPort>(loop, settings, listener);
}

TcpTransport::TcpTransport(uv_loop_t* loop, Settings settings, Listener& listener)
    : loop_(loop), settings_(std::move(settings)), listener_(listener) {
  (void)retry_.init<TcpTransport, &TcpTransport::try_connect>(loop_, this);
}

void TcpTransport::start() {
  running_ = true;
  try_connect();
}

void TcpTransport::try_connect() {
  if (!running_ || connected_ || lookup_.running()) return;
  const auto address = parse_tcp_path(settings_.path);
  if (!address) {
    retry_later("'" + settings_.path + "' is not tcp:HOST:PORT");
    return;
  }
  ++attempt_;
  std::string why;
  if (!lookup_.start(
          loop_, address->host, address->port,
          [this](int error, const addrinfo* result) { on_resolved(error == 0 ? "" : ::gai_strerror(error), result); },
          why)) {
    retry_later("cannot resolve " + address->host + ": " + why);
  }
}

void TcpTransport::on_resolved(const std::string& error, const addrinfo* result) {
  if (!running_) return;
  if (!error.empty() || result == nullptr) {
    retry_later("cannot resolve the host of " + settings_.path + ": " + (error.empty() ? "no address" : error));
    return;
  }
  if (tcp_.init(this, [this](uv_tcp_t* t) { return uv_tcp_init(loop_, t); }) < 0) {
    retry_later("cannot make a socket");
    return;
  }
  uv_tcp_nodelay(tcp_.get(), 1);
  auto* connect = new Connect{{}, attempt_};
  const int rc = uv_tcp_connect(&connect->request, tcp_.get(), result->ai_addr, [](uv_connect_t* request, int outcome) {
    std::unique_ptr<Connect> done(reinterpret_cast<Connect*>(request));
    auto* self = owner_of<TcpTransport>(request->handle);
    if (self != nullptr && done->attempt == self->attempt_) self->on_connected(outcome);
  });
  if (rc < 0) {
    delete connect;
    tcp_.reset();
    retry_later("cannot connect to " + settings_.path + ": " + uv_error_text(rc));
  }
}

void TcpTransport::on_connected(int status) {
  if (status < 0) {
    tcp_.reset();
    retry_later("cannot connect to " + settings_.path + ": " + uv_error_text(status));
    return;
  }
  connected_ = true;
  backoff_ = std::chrono::milliseconds{0};
  last_failure_.clear();
  log_info("connected to " + settings_.path);
  uv_read_start(
      reinterpret_cast<uv_stream_t*>(tcp_.get()),
      [](uv_handle_t* handle, std::size_t, uv_buf_t* buf) {
        auto* self = owner_of<TcpTransport>(handle);
        *buf = self != nullptr ? uv_buf_init(self->buffer_.data(), static_cast<unsigned>(self->buffer_.size()))
                               : uv_buf_init(nullptr, 0);
      },
      [](uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
        if (auto* self = owner_of<TcpTransport>(stream)) self->on_read(nread, buf);
      });
  listener_.transport_opened();
}

void TcpTransport::on_read(ssize_t nread, const uv_buf_t* buf) {
  if (nread > 0) {
    listener_.transport_received(
        protocol::ByteView(reinterpret_cast<const protocol::Byte*>(buf->base), static_cast<std::size_t>(nread)));
    return;
  }
  if (nread < 0) {
    lose(nread == UV_EOF ? "the robot closed the connection"
                         : "connection lost: " + uv_error_text(static_cast<int>(nread)));
  }
}

void TcpTransport::lose(const std::string& reason) {
  tcp_.reset();
  const bool was_connected = std::exchange(connected_, false);
  if (was_connected) listener_.transport_closed(reason);
  retry_later(reason);
}

void TcpTransport::retry_later(const std::string& reason) {
  if (!running_) return;
  backoff_ = backoff_.count() == 0 ? settings_.reopen_min : std::min(backoff_ * 2, settings_.reopen_max);
  if (reason != last_failure_) {
    last_failure_ = reason;
    listener_.transport_open_failed(
        {reason, "check that the robot (or its network serial bridge, or the simulator) listens at " + settings_.path,
         "or give another --device"});
  }
  retry_.start_after(backoff_);
}

void TcpTransport::write(protocol::ByteView bytes) {
  if (!connected_ || bytes.empty()) return;
  auto* stream = reinterpret_cast<uv_stream_t*>(tcp_.get());
  uv_buf_t direct =
      uv_buf_init(const_cast<char*>(reinterpret_cast<const char*>(bytes.data())), static_cast<unsigned>(bytes.size()));
  const int written = uv_try_write(stream, &direct, 1);
  std::size_t done = written > 0 ? static_cast<std::size_t>(written) : 0;
  if (written < 0 && written != UV_EAGAIN) {
    lose("write failed: " + uv_error_text(written));
    return;
  }
  if (done == bytes.size()) return;
  if (uv_stream_get_write_queue_size(stream) > settings_.max_pending_output) {
    lose("the robot takes nothing: " + std::to_string(uv_stream_get_write_queue_size(stream)) + " bytes waiting");
    return;
  }
  auto* rest = new Write{{}, std::string(reinterpret_cast<const char*>(bytes.data()) + done, bytes.size() - done)};
  uv_buf_t buffer = uv_buf_init(rest->bytes.data(), static_cast<unsigned>(rest->bytes.size()));
  const int rc = uv_write(&rest->request, stream, &buffer, 1,
                          [](uv_write_t* request, int) { delete reinterpret_cast<Write*>(request); });
  if (rc < 0) {
    delete rest;
    lose("write failed: " + uv_error_text(rc));
  }
}

void TcpTransport::write_now(protocol::ByteView bytes) {
  if (!connected_) return;
  uv_buf_t direct =
      uv_buf_init(const_cast<char*>(reinterpret_cast<const char*>(bytes.data())), static_cast<unsigned>(bytes.size()));
  if (uv_try_write(reinterpret_cast<uv_stream_t*>(tcp_.get()), &direct, 1) != static_cast<int>(bytes.size())) {
    log_warning("could not write the last bytes to " + settings_.path);
  }
}

void TcpTransport::close() {
  running_ = false;
  ++attempt_;  // an answer to a pending connection is ignored
  lookup_.cancel();
  retry_.reset();
  if (tcp_) {
    tcp_.reset();
    connected_ = false;
  }
}

}  // namespace flockbridge::bridge
