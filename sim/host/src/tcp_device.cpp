#include "flockbridge/sim/host/tcp_device.hpp"

#include <netinet/in.h>

namespace flockbridge::sim {

TcpDevice::TcpDevice(uv_loop_t* loop, std::uint16_t port, Listener& listener, Log log)
    : loop_(loop), port_(port), listener_(listener), log_(std::move(log)) {}

TcpDevice::~TcpDevice() {
  unplug();
}

protocol::Result<protocol::Done> TcpDevice::plug_in(const std::string& /*link_path*/) {
  unplug();
  if (server_.init(this, [this](uv_tcp_t* t) { return uv_tcp_init(loop_, t); }) < 0) {
    return protocol::Error{"cannot make a socket"};
  }
  sockaddr_in address{};
  uv_ip4_addr("127.0.0.1", port_, &address);
  int rc = uv_tcp_bind(server_.get(), reinterpret_cast<const sockaddr*>(&address), 0);
  if (rc == 0) {
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(server_.get()), 4, [](uv_stream_t* server, int status) {
      if (auto* self = owner_of<TcpDevice>(server)) self->on_connection(status);
    });
  }
  if (rc < 0) {
    server_.reset();
    return protocol::Error{"cannot listen on 127.0.0.1:" + std::to_string(port_) + ": " + uv_error_text(rc)};
  }
  sockaddr_storage bound{};
  int length = sizeof(bound);
  uv_tcp_getsockname(server_.get(), reinterpret_cast<sockaddr*>(&bound), &length);
  bound_port_ = ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  port_ = bound_port_;  // plugged in again, it is found at the same place
  log_("listening: " + device_path());
  return protocol::Done{};
}

std::string TcpDevice::device_path() const {
  return "tcp:127.0.0.1:" + std::to_string(bound_port_);
}

void TcpDevice::on_connection(int status) {
  if (status < 0) return;
  UvHandle<uv_tcp_t> client;
  if (client.init(this, [this](uv_tcp_t* t) { return uv_tcp_init(loop_, t); }) < 0) return;
  if (uv_accept(reinterpret_cast<uv_stream_t*>(server_.get()), reinterpret_cast<uv_stream_t*>(client.get())) < 0) {
    return;
  }
  if (host_) {
    log_("a second host connected: closed");
    return;  // `client` closes as it goes
  }
  host_ = std::move(client);
  uv_tcp_nodelay(host_.get(), 1);
  uv_read_start(
      reinterpret_cast<uv_stream_t*>(host_.get()),
      [](uv_handle_t* handle, std::size_t, uv_buf_t* buf) {
        auto* self = owner_of<TcpDevice>(handle);
        *buf = self != nullptr ? uv_buf_init(self->buffer_.data(), static_cast<unsigned>(self->buffer_.size()))
                               : uv_buf_init(nullptr, 0);
      },
      [](uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
        if (auto* self = owner_of<TcpDevice>(stream)) self->on_read(nread, buf);
      });
  log_("port opened by the host");
  listener_.device_opened();
}

void TcpDevice::on_read(ssize_t nread, const uv_buf_t* buf) {
  if (nread > 0) {
    listener_.device_received(
        protocol::ByteView(reinterpret_cast<const protocol::Byte*>(buf->base), static_cast<std::size_t>(nread)));
    return;
  }
  if (nread < 0) {
    log_("port closed by the host");
    drop_host();
  }
}

void TcpDevice::drop_host() {
  if (!host_) return;
  host_.reset();
  listener_.device_closed();
}

void TcpDevice::unplug() {
  const bool was = static_cast<bool>(server_);
  drop_host();
  server_.reset();
  if (was) log_("unplugged");
}

void TcpDevice::write(protocol::ByteView bytes) {
  if (!host_) return;
  // A line does not wait for a reader: what the socket does not take is lost.
  uv_buf_t buffer =
      uv_buf_init(const_cast<char*>(reinterpret_cast<const char*>(bytes.data())), static_cast<unsigned>(bytes.size()));
  (void)uv_try_write(reinterpret_cast<uv_stream_t*>(host_.get()), &buffer, 1);
}

}  // namespace flockbridge::sim
