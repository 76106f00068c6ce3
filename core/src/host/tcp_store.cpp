#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "braze/error.h"
#include "braze/host/store.h"

namespace braze::host {

// The wire format. A client opens with kHello and the server answers kHello, so a port held by
// something else is reported as such instead of hanging. Then each request is
//   [op: 1 byte]['key' length: u32][payload length: u32][key][payload]
// ('S' set: the payload is the value; 'G' get: the payload is the timeout in ms as a u64), and
// each reply is [status: 1 byte][length: u32][bytes] ('K' set done, 'V' value, 'T' timed out).
// Integers are little-endian. The server answers a get at its deadline, so a reply always comes
// and the connection never holds a stale one.
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kHello[8] = {'B', 'R', 'Z', 'S', 'T', 'O', 'R', '1'};
constexpr size_t kHeaderBytes = 9;
// Far above any rendezvous value; a larger length means a stray client speaking another protocol.
constexpr uint32_t kMaxKeyBytes = 4096;
constexpr uint32_t kMaxValueBytes = 256u << 20;

void putU32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t getLittleEndian(const char* bytes, int count) {
  uint64_t value = 0;
  for (int i = count - 1; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(bytes[i]);
  return value;
}

std::string frame(char op, std::string_view key, std::string_view payload) {
  std::string out;
  out.reserve(kHeaderBytes + key.size() + payload.size());
  out.push_back(op);
  putU32(out, static_cast<uint32_t>(key.size()));
  putU32(out, static_cast<uint32_t>(payload.size()));
  out.append(key);
  out.append(payload);
  return out;
}

std::string errnoText(int error) {
  return std::strerror(error);
}

// Blocking write of all of `bytes`; false when the peer is gone. MSG_NOSIGNAL: a dead peer must
// be an error, not a SIGPIPE that kills the process.
bool writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

// Waits for `fd` to be ready for `events` until `deadline`; false on timeout.
bool waitReady(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd entry{fd, events, 0};
    const int ready = ::poll(&entry, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

// Reads exactly `count` bytes before `deadline`; false with `why` set when it cannot.
bool readExact(int fd, char* out, size_t count, Clock::time_point deadline, std::string& why) {
  while (count > 0) {
    if (!waitReady(fd, POLLIN, deadline)) {
      why = "no reply in time";
      return false;
    }
    const ssize_t got = ::recv(fd, out, count, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) {
      why = "the server closed the connection (did rank 0 exit?)";
      return false;
    }
    if (got < 0) {
      why = errnoText(errno);
      return false;
    }
    out += got;
    count -= static_cast<size_t>(got);
  }
  return true;
}

// One attempt to connect to any address of `address`:`port` before `deadline`; -1 with `why`.
int connectOnce(const std::string& address, int port, Clock::time_point deadline,
                std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int error = ::getaddrinfo(address.c_str(), service.c_str(), &hints, &found)) {
    why = std::string("cannot resolve the address: ") + gai_strerror(error);
    return -1;
  }
  int connected = -1;
  for (addrinfo* entry = found; entry != nullptr && connected < 0; entry = entry->ai_next) {
    const int fd = ::socket(entry->ai_family, entry->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      why = errnoText(errno);
      continue;
    }
    // Non-blocking, so an unreachable host costs the time left, not the kernel's SYN retries.
    int error = ::connect(fd, entry->ai_addr, entry->ai_addrlen) == 0 ? 0 : errno;
    if (error == EINPROGRESS) {
      socklen_t length = sizeof(error);
      error = waitReady(fd, POLLOUT, deadline) &&
                      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0
                  ? error
                  : ETIMEDOUT;
    }
    if (error != 0) {
      why = errnoText(error);
      ::close(fd);
      continue;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    connected = fd;
  }
  ::freeaddrinfo(found);
  return connected;
}

}  // namespace

/// Serves the store from one thread: poll() over the listening socket, every connection and a
/// pipe that wakes it to stop. Gets of unset keys wait in `waiters_` until set or timed out.
class TcpStore::Server {
 public:
  Server(const std::string& address, int port) : address_(address) {
    listener_ = listenOn(port);
    if (::pipe2(wake_, O_CLOEXEC) != 0) {
      const int error = errno;
      ::close(listener_);
      BRAZE_THROW() << "cannot serve the TCP store at " << address_ << ":" << port_
                    << ": pipe failed: " << errnoText(error);
    }
    thread_ = std::thread([this] { run(); });
  }

  ~Server() {
    const char stop = 0;
    while (::write(wake_[1], &stop, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
    for (const Connection& connection : connections_) ::close(connection.fd);
    ::close(listener_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

  int port() const { return port_; }

 private:
  struct Connection {
    int fd = -1;
    std::string input;
    bool greeted = false;
    bool closed = false;
  };
  struct Waiter {
    int fd;
    std::string key;
    Clock::time_point deadline;
  };

  // Listens on every interface: IPv6 with IPv4 mapped in, or IPv4 alone where IPv6 is off.
  int listenOn(int port) {
    int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_storage storage{};
    socklen_t length = 0;
    if (fd >= 0) {
      const int zero = 0;
      ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
      auto* any = reinterpret_cast<sockaddr_in6*>(&storage);
      any->sin6_family = AF_INET6;
      any->sin6_addr = in6addr_any;
      any->sin6_port = htons(static_cast<uint16_t>(port));
      length = sizeof(sockaddr_in6);
    } else {
      fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      auto* any = reinterpret_cast<sockaddr_in*>(&storage);
      any->sin_family = AF_INET;
      any->sin_addr.s_addr = htonl(INADDR_ANY);
      any->sin_port = htons(static_cast<uint16_t>(port));
      length = sizeof(sockaddr_in);
    }
    BRAZE_USER_CHECK(fd >= 0) << "cannot serve the TCP store at " << address_ << ":" << port
                              << ": socket failed: " << errnoText(errno);
    // A port left in TIME_WAIT by the previous run of the job stays usable.
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&storage), length) != 0 ||
        ::listen(fd, SOMAXCONN) != 0) {
      const int error = errno;
      ::close(fd);
      BRAZE_THROW() << "cannot serve the TCP store at " << address_ << ":" << port << ": "
                    << errnoText(error)
                    << (error == EADDRINUSE
                            ? ". Another process listens on that port (an earlier job still "
                              "running?): choose another MASTER_PORT, or port 0 for a free one"
                            : "");
    }
    length = sizeof(storage);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length);
    port_ = storage.ss_family == AF_INET6
                ? ntohs(reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port)
                : ntohs(reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
    return fd;
  }

  void run() {
    std::vector<pollfd> polled;
    while (true) {
      polled.assign({{wake_[0], POLLIN, 0}, {listener_, POLLIN, 0}});
      for (const Connection& connection : connections_)
        polled.push_back({connection.fd, POLLIN, 0});
      int timeout_ms = -1;
      if (!waiters_.empty()) {
        Clock::time_point first = waiters_.front().deadline;
        for (const Waiter& waiter : waiters_) first = std::min(first, waiter.deadline);
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(first - Clock::now());
        timeout_ms = static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1000));
      }
      if (::poll(polled.data(), polled.size(), timeout_ms) < 0 && errno != EINTR) return;
      if (polled[0].revents != 0) return;
      if (polled[1].revents & POLLIN) accept();
      for (size_t i = 2; i < polled.size(); ++i) {
        if (polled[i].revents != 0) receive(connections_[i - 2]);
      }
      expireWaiters();
      dropClosed();
    }
  }

  void accept() {
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    connections_.emplace_back().fd = fd;
  }

  void receive(Connection& connection) {
    char buffer[65536];
    const ssize_t got = ::recv(connection.fd, buffer, sizeof(buffer), 0);
    if (got < 0 && errno == EINTR) return;
    if (got <= 0) {
      connection.closed = true;
      return;
    }
    connection.input.append(buffer, static_cast<size_t>(got));
    if (!connection.greeted) {
      if (connection.input.size() < sizeof(kHello)) return;
      if (connection.input.compare(0, sizeof(kHello), kHello, sizeof(kHello)) != 0 ||
          !writeAll(connection.fd, std::string_view(kHello, sizeof(kHello)))) {
        connection.closed = true;
        return;
      }
      connection.greeted = true;
      connection.input.erase(0, sizeof(kHello));
    }
    while (!connection.closed && connection.input.size() >= kHeaderBytes) {
      const std::string& input = connection.input;
      const auto key_bytes = static_cast<uint32_t>(getLittleEndian(input.data() + 1, 4));
      const auto payload_bytes = static_cast<uint32_t>(getLittleEndian(input.data() + 5, 4));
      if (key_bytes > kMaxKeyBytes || payload_bytes > kMaxValueBytes) {
        connection.closed = true;
        return;
      }
      const size_t total = kHeaderBytes + key_bytes + payload_bytes;
      if (input.size() < total) return;
      const char op = input[0];
      std::string key = input.substr(kHeaderBytes, key_bytes);
      std::string payload = input.substr(kHeaderBytes + key_bytes, payload_bytes);
      connection.input.erase(0, total);
      handle(connection, op, std::move(key), std::move(payload));
    }
  }

  void handle(Connection& connection, char op, std::string key, std::string payload) {
    if (op == 'S') {
      reply(connection.fd, 'K', {});
      for (auto it = waiters_.begin(); it != waiters_.end();) {
        if (it->key == key) {
          reply(it->fd, 'V', payload);
          it = waiters_.erase(it);
        } else {
          ++it;
        }
      }
      values_[std::move(key)] = std::move(payload);
    } else if (op == 'G' && payload.size() == 8) {
      if (auto it = values_.find(key); it != values_.end()) {
        reply(connection.fd, 'V', it->second);
      } else {
        // Capped so that the deadline cannot overflow the clock.
        const auto timeout = std::chrono::milliseconds(
            std::min<uint64_t>(getLittleEndian(payload.data(), 8), uint64_t{1} << 40));
        waiters_.push_back({connection.fd, std::move(key), Clock::now() + timeout});
      }
    } else {
      connection.closed = true;
    }
  }

  void reply(int fd, char status, std::string_view bytes) {
    std::string out(1, status);
    putU32(out, static_cast<uint32_t>(bytes.size()));
    out.append(bytes);
    if (writeAll(fd, out)) return;
    for (Connection& connection : connections_) {
      if (connection.fd == fd) connection.closed = true;
    }
  }

  void expireWaiters() {
    const Clock::time_point now = Clock::now();
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->deadline <= now) {
        reply(it->fd, 'T', {});
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void dropClosed() {
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (!it->closed) {
        ++it;
        continue;
      }
      const int fd = it->fd;
      std::erase_if(waiters_, [fd](const Waiter& waiter) { return waiter.fd == fd; });
      ::close(fd);
      it = connections_.erase(it);
    }
  }

  std::string address_;
  int port_ = 0;
  int listener_ = -1;
  int wake_[2] = {-1, -1};
  std::vector<Connection> connections_;
  std::vector<Waiter> waiters_;
  std::map<std::string, std::string> values_;
  std::thread thread_;
};

TcpStore::TcpStore(std::string address, int port, bool is_server,
                   std::chrono::milliseconds connect_timeout)
    : address_(std::move(address)), port_(port) {
  BRAZE_USER_CHECK(port >= 0 && port <= 65535)
      << "TcpStore(" << address_ << ", " << port << "): " << port
      << " is not a TCP port; use 1 to 65535, or 0 for the server to pick a free one";
  BRAZE_USER_CHECK(is_server || port != 0)
      << "TcpStore(" << address_ << ", 0): only the server may pick its port; a client needs "
      << "the port the server listens on";
  std::string connect_to = address_;
  if (is_server) {
    server_ = std::make_unique<Server>(address_, port);
    port_ = server_->port();
    // The server's own client stays on this host, whatever name the other ranks use.
    connect_to = "127.0.0.1";
  }
  const Clock::time_point deadline = Clock::now() + connect_timeout;
  std::string why = "no attempt finished";
  auto pause = std::chrono::milliseconds(10);
  while (true) {
    const int fd = connectOnce(connect_to, port_, deadline, why);
    if (fd >= 0) {
      char hello[sizeof(kHello)];
      const bool answered = writeAll(fd, std::string_view(kHello, sizeof(kHello))) &&
                            readExact(fd, hello, sizeof(hello), deadline, why);
      if (answered && std::equal(hello, hello + sizeof(hello), kHello)) {
        socket_ = fd;
        return;
      }
      ::close(fd);
      BRAZE_THROW() << describe() << " answered but is not a Braze store"
                    << (answered ? "" : " (" + why + ")")
                    << "; check that MASTER_PORT names the port rank 0 serves the store on";
    }
    if (Clock::now() + pause >= deadline) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(250));
  }
  BRAZE_THROW() << "cannot reach " << describe() << " within " << connect_timeout.count()
                << " ms: " << why
                << ". Rank 0 serves it: check that rank 0 is running and that the address and "
                   "port (MASTER_ADDR, MASTER_PORT) name its host and port";
}

TcpStore::~TcpStore() {
  if (socket_ >= 0) ::close(socket_);
  server_.reset();
}

std::string TcpStore::describe() const {
  return "the TCP store at " + address_ + ":" + std::to_string(port_);
}

std::string TcpStore::call(char op, const std::string& key, std::string_view payload,
                           std::chrono::milliseconds reply_timeout, bool* found) {
  const char* action = op == 'S' ? "setting" : "getting";
  BRAZE_USER_CHECK(key.size() <= kMaxKeyBytes && payload.size() <= kMaxValueBytes)
      << action << " key '" << key.substr(0, 64) << "' in " << describe() << ": the key has "
      << key.size() << " bytes and the value " << payload.size() << "; the limits are "
      << kMaxKeyBytes << " and " << kMaxValueBytes;
  std::lock_guard<std::mutex> lock(client_mutex_);
  BRAZE_USER_CHECK(socket_ >= 0) << action << " key '" << key << "' in " << describe()
                                 << ": the connection was lost by an earlier call";
  const Clock::time_point deadline = Clock::now() + reply_timeout;
  std::string why = "the server closed the connection (did rank 0 exit?)";
  char header[5];
  std::string value;
  bool ok = writeAll(socket_, frame(op, key, payload)) &&
            readExact(socket_, header, sizeof(header), deadline, why);
  if (ok) {
    value.resize(getLittleEndian(header + 1, 4));
    ok = value.size() <= kMaxValueBytes &&
         readExact(socket_, value.data(), value.size(), deadline, why);
  }
  if (!ok) {
    // The stream is out of step after a partial exchange: refuse later calls.
    ::close(socket_);
    socket_ = -1;
    BRAZE_THROW() << "lost the connection to " << describe() << " while " << action << " key '"
                  << key << "': " << why;
  }
  if (found != nullptr) *found = header[0] == 'V';
  return value;
}

void TcpStore::set(const std::string& key, std::string_view value) {
  call('S', key, value, std::chrono::seconds(60), nullptr);
}

std::string TcpStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  timeout = std::max(timeout, std::chrono::milliseconds(0));
  std::string payload;
  for (int i = 0; i < 8; ++i) {
    payload.push_back(static_cast<char>(static_cast<uint64_t>(timeout.count()) >> (8 * i)));
  }
  bool found = false;
  // The server replies at its deadline; the margin covers the network, not the wait.
  std::string value = call('G', key, payload, timeout + std::chrono::seconds(30), &found);
  if (!found) throwTimeout(key, timeout);
  return value;
}

}  // namespace braze::host
