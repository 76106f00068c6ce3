// The rendezvous stores on one machine: the TCP store on loopback (server and clients in
// threads, a client in a forked process, a client started before its server) and the file
// store in a temporary directory, through the same cases; then each one's own errors.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "braze/host/store.h"
#include "support/error_matchers.h"

namespace braze::host {
namespace {

using namespace std::chrono_literals;

// A fresh directory per test, removed afterwards.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("braze-store-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The first participant (the TCP server, or the first opener of the directory) and a way to
// make more, as another rank would.
struct StoreGroup {
  std::unique_ptr<Store> first;
  std::function<std::unique_ptr<Store>()> another;
};

enum class Kind { Tcp, File };

class StoreTest : public ::testing::TestWithParam<Kind> {
 protected:
  StoreGroup makeGroup() {
    if (GetParam() == Kind::Tcp) {
      auto server = std::make_unique<TcpStore>("127.0.0.1", 0, true);
      const int port = server->port();
      return {std::move(server),
              [port] { return std::make_unique<TcpStore>("127.0.0.1", port, false); }};
    }
    const std::filesystem::path path = directory_.path();
    return {std::make_unique<FileStore>(path),
            [path] { return std::make_unique<FileStore>(path); }};
  }

  TemporaryDirectory directory_;
};

TEST_P(StoreTest, SetThenGetKeepsEveryByte) {
  StoreGroup group = makeGroup();
  const std::string binary("a\0b\xff\n", 5);
  std::string large(1 << 20, '\0');
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>(i * 131 % 251);
  group.first->set("binary", binary);
  group.first->set("large", large);
  group.first->set("empty", "");
  const std::unique_ptr<Store> other = group.another();
  EXPECT_EQ(other->get("binary", 5s), binary);
  EXPECT_EQ(other->get("large", 5s), large);
  EXPECT_EQ(other->get("empty", 5s), "");
}

TEST_P(StoreTest, SettingAgainReplacesTheValue) {
  StoreGroup group = makeGroup();
  group.first->set("key", "old");
  group.first->set("key", "new");
  EXPECT_EQ(group.another()->get("key", 5s), "new");
}

TEST_P(StoreTest, KeysWithSlashesAndDotsStayApart) {
  StoreGroup group = makeGroup();
  const std::vector<std::string> keys = {"a/b", "a%2Fb", "../escape", ".", "", "rank 0"};
  for (size_t i = 0; i < keys.size(); ++i) group.first->set(keys[i], std::to_string(i));
  for (size_t i = 0; i < keys.size(); ++i)
    EXPECT_EQ(group.first->get(keys[i], 5s), std::to_string(i));
  if (GetParam() == Kind::File) {
    // Nothing was written outside the directory, and no temporary file is left.
    EXPECT_FALSE(std::filesystem::exists(directory_.path().parent_path() / "escape"));
    size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(directory_.path())) {
      EXPECT_NE(entry.path().filename().string().rfind(".tmp-", 0), 0u) << entry.path();
      ++files;
    }
    EXPECT_EQ(files, keys.size());
  }
}

TEST_P(StoreTest, FourRanksInThreadsExchangeTheirValues) {
  StoreGroup group = makeGroup();
  constexpr int kRanks = 4;
  std::vector<std::unique_ptr<Store>> stores;
  stores.push_back(std::move(group.first));
  for (int rank = 1; rank < kRanks; ++rank) stores.push_back(group.another());
  std::vector<std::vector<std::string>> seen(kRanks, std::vector<std::string>(kRanks));
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        stores[rank]->set("value/" + std::to_string(rank), "from rank " + std::to_string(rank));
        for (int peer = 0; peer < kRanks; ++peer)
          seen[rank][peer] = stores[rank]->get("value/" + std::to_string(peer), 10s);
      } catch (const std::exception& error) {
        errors[rank] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_EQ(errors[rank], "") << "rank " << rank;
    for (int peer = 0; peer < kRanks; ++peer)
      EXPECT_EQ(seen[rank][peer], "from rank " + std::to_string(peer));
  }
}

TEST_P(StoreTest, GetWaitsForAKeySetLater) {
  StoreGroup group = makeGroup();
  const std::unique_ptr<Store> other = group.another();
  const auto start = std::chrono::steady_clock::now();
  std::thread setter([&] {
    std::this_thread::sleep_for(200ms);
    other->set("late", "here");
  });
  EXPECT_EQ(group.first->get("late", 20s), "here");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
  setter.join();
}

TEST_P(StoreTest, TimeoutNamesTheKeyTheStoreAndTheTimeout) {
  StoreGroup group = makeGroup();
  const std::unique_ptr<Store> other = group.another();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(test::throwsError([&] { other->get("never/set", 100ms); },
                                {"timed out after 100 ms waiting for key 'never/set' in ",
                                 other->describe(), "no rank set it"}));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 90ms);
  EXPECT_LT(waited, 5s);
  // The store still answers after a timeout.
  group.first->set("never/set", "now");
  EXPECT_EQ(other->get("never/set", 5s), "now");
}

TEST_P(StoreTest, ForkedProcessIsAClient) {
  StoreGroup group = makeGroup();
  std::fflush(nullptr);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only a fresh client here, and _exit: the parent's objects (a server thread) are not ours.
    int code = 0;
    try {
      const std::unique_ptr<Store> store = group.another();
      store->set("child", "hello from the child");
      code = store->get("parent", 20s) == "hello from the parent" ? 0 : 3;
    } catch (...) {
      code = 2;
    }
    ::_exit(code);
  }
  EXPECT_EQ(group.first->get("child", 20s), "hello from the child");
  group.first->set("parent", "hello from the parent");
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the child's store threw, 3: it read a wrong value";
}

TEST_P(StoreTest, GenerationsCountPerName) {
  StoreGroup group = makeGroup();
  EXPECT_EQ(group.first->nextGeneration("communicator"), 0);
  EXPECT_EQ(group.first->nextGeneration("communicator"), 1);
  EXPECT_EQ(group.first->nextGeneration("other"), 0);
  EXPECT_EQ(group.another()->nextGeneration("communicator"), 0);
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreTest, ::testing::Values(Kind::Tcp, Kind::File),
                         [](const auto& info) { return info.param == Kind::Tcp ? "Tcp" : "File"; });

// A port nothing listens on: taken by a server that is then closed.
int unusedPort() {
  TcpStore server("127.0.0.1", 0, true);
  return server.port();
}

TEST(TcpStoreTest, PortZeroPicksAFreePort) {
  TcpStore server("127.0.0.1", 0, true);
  EXPECT_TRUE(server.isServer());
  EXPECT_GT(server.port(), 0);
  EXPECT_EQ(server.describe(), "the TCP store at 127.0.0.1:" + std::to_string(server.port()));
  TcpStore client("localhost", server.port(), false);
  EXPECT_FALSE(client.isServer());
  client.set("k", "v");
  EXPECT_EQ(server.get("k", 5s), "v");
}

TEST(TcpStoreTest, ClientMayStartBeforeTheServer) {
  const int port = unusedPort();
  std::string value;
  std::string error;
  std::thread client_thread([&] {
    try {
      TcpStore client("127.0.0.1", port, false, 20s);
      value = client.get("ready", 20s);
    } catch (const std::exception& caught) {
      error = caught.what();
    }
  });
  std::this_thread::sleep_for(300ms);
  TcpStore server("127.0.0.1", port, true);
  server.set("ready", "yes");
  client_thread.join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(value, "yes");
}

TEST(TcpStoreTest, NoServerTimesOutNamingAddressAndPort) {
  const int port = unusedPort();
  const std::string where = "127.0.0.1:" + std::to_string(port);
  EXPECT_TRUE(test::throwsError([&] { TcpStore("127.0.0.1", port, false, 200ms); },
                                {"cannot reach the TCP store at " + where, "within 200 ms",
                                 "Connection refused", "MASTER_ADDR, MASTER_PORT"}));
}

TEST(TcpStoreTest, UnknownHostNamesTheAddress) {
  EXPECT_TRUE(test::throwsError(
      [] { TcpStore("no-such-host.invalid", 29500, false, 100ms); },
      {"the TCP store at no-such-host.invalid:29500", "cannot resolve the address"}));
}

TEST(TcpStoreTest, PortInUseNamesThePort) {
  TcpStore server("127.0.0.1", 0, true);
  const std::string port = std::to_string(server.port());
  EXPECT_TRUE(test::throwsError([&] { TcpStore("127.0.0.1", server.port(), true); },
                                {"cannot serve the TCP store at 127.0.0.1:" + port,
                                 "Another process listens on that port", "port 0"}));
}

TEST(TcpStoreTest, PortsOutsideTheRangeAreRefused) {
  EXPECT_TRUE(test::throwsError([] { TcpStore("127.0.0.1", 70000, true); },
                                {"TcpStore(127.0.0.1, 70000)", "is not a TCP port"}));
  EXPECT_TRUE(test::throwsError([] { TcpStore("127.0.0.1", 0, false); },
                                {"only the server may pick its port"}));
}

TEST(TcpStoreTest, AnotherServiceOnThePortIsNotAStore) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  socklen_t length = sizeof(address);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  const int port = ntohs(address.sin_port);
  std::thread service([listener] {
    const int connection = ::accept(listener, nullptr, nullptr);
    const char reply[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
    (void)!::write(connection, reply, sizeof(reply) - 1);
    ::close(connection);
  });
  EXPECT_TRUE(test::throwsError([&] { TcpStore("127.0.0.1", port, false, 5s); },
                                {"answered but is not a Braze store", std::to_string(port)}));
  service.join();
  ::close(listener);
}

TEST(TcpStoreTest, ServerGoneFailsAWaitingGet) {
  auto server = std::make_unique<TcpStore>("127.0.0.1", 0, true);
  TcpStore client("127.0.0.1", server->port(), false);
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    server.reset();
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(test::throwsError([&] { client.get("never", 60s); },
                                {"lost the connection to the TCP store at 127.0.0.1:",
                                 "while getting key 'never'", "did rank 0 exit?"}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  stopper.join();
  EXPECT_TRUE(test::throwsError([&] { client.set("k", "v"); },
                                {"the connection was lost by an earlier call"}));
}

TEST(FileStoreTest, DescribesItsDirectory) {
  TemporaryDirectory directory;
  FileStore store(directory.path() / "nested" / "store");
  EXPECT_TRUE(std::filesystem::is_directory(directory.path() / "nested" / "store"));
  EXPECT_EQ(store.describe(),
            "the file store in '" + (directory.path() / "nested" / "store").string() + "'");
}

TEST(FileStoreTest, UnusableDirectoryIsNamed) {
  TemporaryDirectory directory;
  const std::filesystem::path file = directory.path() / "a-file";
  { std::ofstream(file) << "x"; }
  EXPECT_TRUE(test::throwsError(
      [&] { FileStore store(file / "store"); },
      {"cannot use '" + (file / "store").string() + "' as a file store", "every rank can write"}));
}

}  // namespace
}  // namespace braze::host
