#include "flockbridge/bridge/tcp_session.hpp"

#include <sys/uio.h>

#include <array>
#include <cerrno>
#include <memory>
#include <vector>

#include "flockbridge/bridge/client_socket.hpp"

namespace flockbridge::bridge {
namespace {

/// The most messages handed to one uv_write.
constexpr std::size_t kWriteBatch = 64;

/// One read buffer serves every session of the loop: libuv calls a stream's
/// read callback right after its allocation callback, and the session has
/// consumed the bytes (into its decoder) before the callback returns.
thread_local std::array<char, std::size_t{64} * 1024> t_read_buffer;

/// The pieces of the write being made: sent at once, or copied into a batch.
thread_local std::array<iovec, kWriteBatch> t_pieces;

/// A write request owns the buffers it writes until its callback runs.
struct WriteRequest {
  uv_write_t request{};
  std::vector<SharedBuffer> messages;
  std::vector<uv_buf_t> buffers;
};

}  // namespace

TcpSession::TcpSession(uv_loop_t* loop, Host& host, std::uint64_t id, ClientKind kind, const Config& config,
                       protocol::BridgeCounters& counters, std::unique_ptr<NativeClient> native)
    : Session(host, id, kind, config, counters, std::move(native)),
      loop_(loop),
      lines_(protocol::MessageDecoder::Framing::Lines, config.max_line) {}

TcpSession::~TcpSession() {
  tcp_.reset();
}

int TcpSession::accept(uv_stream_t* server) {
  int rc = tcp_.init(this, [this](uv_tcp_t* t) { return uv_tcp_init(loop_, t); });
  if (rc < 0) return rc;
  rc = uv_accept(server, reinterpret_cast<uv_stream_t*>(tcp_.get()));
  if (rc < 0) return rc;
  uv_os_fd_t fd = -1;
  rc = uv_fileno(reinterpret_cast<uv_handle_t*>(tcp_.get()), &fd);
  if (rc < 0) return rc;
  fd_ = fd;
  peer_ = peer_name(fd);
  tune_client_socket(fd, config_);
  return 0;
}

void TcpSession::start_transport() {
  const int rc = uv_read_start(
      reinterpret_cast<uv_stream_t*>(tcp_.get()),
      [](uv_handle_t*, std::size_t, uv_buf_t* buf) {
        *buf = uv_buf_init(t_read_buffer.data(), static_cast<unsigned>(t_read_buffer.size()));
      },
      [](uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
        if (auto* self = owner_of<TcpSession>(stream)) self->on_read(nread, buf);
      });
  if (rc < 0) close("cannot read: " + uv_error_text(rc));
}

void TcpSession::close_transport(std::string_view /*reason*/, CloseKind /*kind*/) {
  tcp_.reset();
}

void TcpSession::on_read(ssize_t nread, const uv_buf_t* buf) {
  if (nread == UV_EOF) {
    // The client has finished sending (it may still read, as `echo ... | nc`
    // does): answer what it sent, then close.
    uv_read_stop(reinterpret_cast<uv_stream_t*>(tcp_.get()));
    input_over();
    return;
  }
  if (nread < 0) {
    // ETIMEDOUT (keepalive or user timeout), ECONNRESET and the like: the
    // client's side is gone. Nothing more is read while the close waits its turn.
    uv_read_stop(reinterpret_cast<uv_stream_t*>(tcp_.get()));
    input_over("connection lost: " + uv_error_text(static_cast<int>(nread)));
    return;
  }
  const protocol::ByteView bytes(reinterpret_cast<const protocol::Byte*>(buf->base), static_cast<std::size_t>(nread));
  const SteadyTime now = steady_now();
  if (kind() == ClientKind::Native) {
    handle_native_bytes(bytes, now);
    return;
  }
  note_input(now);
  lines_.feed(bytes, now);
  while (!closing()) {
    const auto event = lines_.next();
    if (!event) break;
    if (event->kind == protocol::MessageDecoder::EventKind::TooLong) {
      reply_error(nullptr,
                  protocol::Error{"line longer than " + std::to_string(config_.max_line) + " bytes; discarded"});
      continue;
    }
    handle_message(event->body);
  }
}

std::span<const iovec> TcpSession::take_write() {
  batch_.clear();
  take_output(kWriteBatch, batch_);
  for (std::size_t i = 0; i < batch_.size(); ++i) {
    t_pieces[i] = iovec{const_cast<char*>(batch_[i]->data()), batch_[i]->size()};
  }
  return std::span<const iovec>(t_pieces.data(), batch_.size());
}

void TcpSession::flush() {
  // Straight into the kernel when it has room: a client that keeps up then
  // never has a write in flight, so latest-wins only ever drops messages
  // for clients that really are behind. With no uv_write in flight libuv
  // holds nothing of this socket's output, so the session writes the
  // descriptor itself: one send or sendmsg, which is lighter than the
  // write(2) uv_try_write makes, and no allocation (this runs for every
  // client at the sensor rate).
  while (!writing() && !closing() && !output_empty()) {
    if (!finish_write(SendBatch::send_now(fd_, take_write()))) return;
  }
  after_write();
}

bool TcpSession::add_write(SendBatch& batch) {
  if (writing() || closing() || output_empty()) return false;
  batch.add(fd_, take_write(), static_cast<Session*>(this));
  // Until write_sent: whatever is queued meanwhile waits behind this write.
  set_writing(true);
  return true;
}

void TcpSession::write_sent(const SendBatch::Result& result) {
  set_writing(false);
  // Closed since its write was added (an earlier session's result may
  // close others, a lease ending, say): its socket is gone with it.
  if (closing()) return;
  if (finish_write(result)) flush();
}

bool TcpSession::finish_write(const SendBatch::Result& result) {
  if (result.error != 0 && result.error != EAGAIN && result.error != EWOULDBLOCK) {
    close("write failed: " + uv_error_text(-result.error), CloseKind::Dead);
    return false;
  }
  std::size_t skip = result.written > 0 ? static_cast<std::size_t>(result.written) : 0;
  std::size_t first = 0;
  while (first < batch_.size() && skip >= batch_[first]->size()) skip -= batch_[first++]->size();
  if (first == batch_.size()) return true;  // all of it went out

  // The rest waits for the socket; the request owns its buffers until its callback.
  auto* write = new WriteRequest;
  write->request.data = write;
  for (std::size_t i = first; i < batch_.size(); ++i) {
    const std::size_t from = i == first ? skip : 0;
    write->buffers.push_back(
        uv_buf_init(const_cast<char*>(batch_[i]->data()) + from, static_cast<unsigned>(batch_[i]->size() - from)));
    write->messages.push_back(std::move(batch_[i]));
  }
  const int rc = uv_write(&write->request, reinterpret_cast<uv_stream_t*>(tcp_.get()), write->buffers.data(),
                          static_cast<unsigned>(write->buffers.size()), [](uv_write_t* request, int status) {
                            auto* done = static_cast<WriteRequest*>(request->data);
                            auto* self = owner_of<TcpSession>(request->handle);
                            delete done;
                            if (self != nullptr) self->on_write_done(status);
                          });
  if (rc < 0) {
    delete write;
    close("write failed: " + uv_error_text(rc), CloseKind::Dead);
    return false;
  }
  set_writing(true);
  return true;
}

void TcpSession::on_write_done(int status) {
  set_writing(false);
  if (status < 0) {
    close("write failed: " + uv_error_text(status), CloseKind::Dead);
    return;
  }
  flush();
}

void TcpSession::transport_housekeeping(SteadyTime now) {
  if (kind() == ClientKind::Native) {
    expire_native_input(now);
    return;
  }
  const std::size_t waiting = lines_.buffered();
  if (lines_.expire(now, config_.message_timeout)) report_incomplete(waiting);
}

}  // namespace flockbridge::bridge
