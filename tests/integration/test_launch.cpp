// `actormesh launch` as a real process supervising real processes: /bin/sh scripts
// as the children, every run bounded in seconds (a launcher still running at its limit is killed and
// the test fails).
#include <catch2/catch.hpp>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <netinet/in.h>
#include <set>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>
#include "support/build_paths.hpp"

extern char** environ;

namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

std::string temp_path(const char* what) {
  std::string path = std::string("/tmp/am_launch_") + what + "_XXXXXX";
  const int fd = mkstemp(path.data());
  REQUIRE(fd >= 0);
  close(fd);
  return path;
}

// `actormesh launch <args>` started as a child of the test, its stdout and stderr in files (read
// while it runs, so a test can wait for its children to be ready).
class launcher {
public:
  explicit launcher(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {})
      : out_path_(temp_path("out")), err_path_(temp_path("err")), started_(steady::now()) {
    std::vector<std::string> argv{am::testing::tool_path(), "launch"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
      env.emplace_back(*e);
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> argv_p, env_p;
    for (auto& a : argv)
      argv_p.push_back(a.data());
    for (auto& e : env)
      env_p.push_back(e.data());
    argv_p.push_back(nullptr);
    env_p.push_back(nullptr);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      const int out = open(out_path_.c_str(), O_WRONLY | O_TRUNC);
      const int err = open(err_path_.c_str(), O_WRONLY | O_TRUNC);
      if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        _exit(120);
      execve(argv_p[0], argv_p.data(), env_p.data());
      _exit(121);
    }
  }

  ~launcher() {
    if (pid_ > 0) { // a failed REQUIRE left it running
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::remove(out_path_.c_str());
    std::remove(err_path_.c_str());
  }

  launcher(const launcher&) = delete;
  launcher& operator=(const launcher&) = delete;

  pid_t pid() const { return pid_; }
  std::string out() const { return read_file(out_path_); }
  std::string err() const { return read_file(err_path_); }

  // Waits until the launcher's stdout has `count` lines containing `text`; false after `limit`.
  bool wait_for_lines(const std::string& text, std::size_t count, std::chrono::milliseconds limit = 10s) const {
    const auto until = steady::now() + limit;
    do {
      const auto lines = lines_of(out());
      if (static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
            return l.find(text) != std::string::npos;
          })) >= count)
        return true;
      std::this_thread::sleep_for(20ms);
    } while (steady::now() < until);
    return false;
  }

  // Waits for the launcher to end and returns its exit status (128 + signal when killed); kills it
  // and fails the test when it runs past `limit`.
  int wait(std::chrono::milliseconds limit = 20s) {
    const auto until = steady::now() + limit;
    int raw = 0;
    for (;;) {
      const pid_t r = waitpid(pid_, &raw, WNOHANG);
      if (r == pid_)
        break;
      if (steady::now() >= until) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &raw, 0);
        pid_ = -1;
        FAIL("actormesh launch still running after " << limit.count() << " ms; stderr: " << err());
      }
      std::this_thread::sleep_for(10ms);
    }
    pid_ = -1;
    seconds_ = std::chrono::duration<double>(steady::now() - started_).count();
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  }

  // Seconds from start to the end seen by wait().
  double seconds() const { return seconds_; }

private:
  std::string out_path_;
  std::string err_path_;
  steady::time_point started_;
  pid_t pid_ = -1;
  double seconds_ = 0;
};

// The sh script run by every child.
std::vector<std::string> sh(const std::string& script) {
  return {"--", "/bin/sh", "-c", script};
}

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Whether `line` is the launcher's first, naming the coordinator.
bool is_start_line(const std::string& line) { return line.rfind("actormesh launch: coordinator ", 0) == 0; }

// `err` without the launcher's start lines.
std::string without_start_lines(const std::string& err) {
  std::string kept;
  for (const auto& line : lines_of(err))
    if (!is_start_line(line))
      kept += line + "\n";
  return kept;
}

// The one line the launcher wrote on stderr besides its start line (the children's stderr lines
// start with '[').
std::string launcher_line(const std::string& err) {
  std::string found;
  for (const auto& line : lines_of(err)) {
    if (line.rfind("actormesh launch: ", 0) == 0 && !is_start_line(line)) {
      CHECK(found.empty());
      found = line;
    }
  }
  return found;
}

bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat)
    return true;
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && (text[close + 2] == 'Z' || text[close + 2] == 'X');
}

// A TCP socket bound to 127.0.0.1 on a port the kernel picks (listening when asked), and the port.
std::pair<int, int> loopback_socket(bool listening) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE((!listening || listen(fd, 1) == 0));
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  return {fd, ntohs(a.sin_port)};
}

// `actormesh launch <args>` (with `env` added) must exit 2 with one line on stderr containing `text`.
void check_refused(const std::vector<std::string>& args, const std::vector<std::string>& env, const std::string& text) {
  std::string shown;
  for (const auto& a : args)
    shown += " " + a;
  INFO("actormesh launch" << shown);
  launcher l(args, env);
  CHECK(l.wait() == 2);
  const auto err = l.err();
  INFO("stderr: " << err);
  CHECK(l.out().empty());
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK_THAT(err, Catch::Contains(text));
}

} // namespace

TEST_CASE("launch: every line of 3 processes is prefixed with its index, on stdout and on stderr", "[launch]") {
  launcher l(cat({"-n", "3"}, sh("echo out $AM_PROCESS_ID; echo err $AM_PROCESS_ID >&2; echo two $AM_PROCESS_ID; "
                                 "printf 'last %s' $AM_PROCESS_ID; printf 'elast %s' $AM_PROCESS_ID >&2")));
  REQUIRE(l.wait() == 0);
  const auto out = lines_of(l.out());
  const auto err = lines_of(without_start_lines(l.err()));
  INFO("stdout:\n" << l.out() << "stderr:\n" << l.err());
  CHECK(std::multiset<std::string>(out.begin(), out.end())
        == std::multiset<std::string>{"[0] out 0", "[0] two 0", "[0] last 0", "[1] out 1", "[1] two 1", "[1] last 1",
                                      "[2] out 2", "[2] two 2", "[2] last 2"});
  CHECK(std::multiset<std::string>(err.begin(), err.end())
        == std::multiset<std::string>{"[0] err 0", "[0] elast 0", "[1] err 1", "[1] elast 1", "[2] err 2",
                                      "[2] elast 2"});
  // Each process's own lines keep their order.
  const auto at = [&](const std::string& line) { return std::find(out.begin(), out.end(), line) - out.begin(); };
  for (const std::string i : {"0", "1", "2"}) {
    CHECK(at("[" + i + "] out " + i) < at("[" + i + "] two " + i));
    CHECK(at("[" + i + "] two " + i) < at("[" + i + "] last " + i));
  }
  CHECK(l.out().back() == '\n'); // the last line without a newline got one
}

TEST_CASE("launch: lines of busy processes never mix, and an endless line is cut into pieces", "[launch]") {
  const std::string payload(150, 'x');
  launcher l(cat({"-n", "3"}, sh("i=0; while [ $i -lt 2000 ]; do echo \"$AM_PROCESS_ID:$i:" + payload
                                 + "\"; i=$((i+1)); done; "
                                   "if [ $AM_PROCESS_ID = 1 ]; then head -c 70000 /dev/zero | tr '\\0' a >&2; fi")));
  REQUIRE(l.wait(60s) == 0);
  int next[3] = {0, 0, 0};
  std::size_t bad = 0;
  for (const auto& line : lines_of(l.out())) {
    const int p = line.size() > 4 ? line[1] - '0' : -1;
    const bool ok = p >= 0 && p < 3
                    && line == "[" + std::to_string(p) + "] " + std::to_string(p) + ":" + std::to_string(next[p]) + ":"
                                   + payload;
    if (ok)
      ++next[p];
    else if (++bad <= 3)
      UNSCOPED_INFO("bad line: " << line.substr(0, 80));
  }
  CHECK(bad == 0);
  CHECK(next[0] == 2000);
  CHECK(next[1] == 2000);
  CHECK(next[2] == 2000);
  const auto err = lines_of(without_start_lines(l.err()));
  REQUIRE(err.size() == 2);
  CHECK(err[0] == "[1] " + std::string(64 * 1024, 'a'));
  CHECK(err[1] == "[1] " + std::string(70000 - 64 * 1024, 'a'));
}

TEST_CASE("launch: every child sees the coordinator, the process count, its index and its CPU devices", "[launch]") {
  const std::string script = "echo \"$AM_COORDINATOR $AM_NUM_PROCESSES $AM_PROCESS_ID ${AM_CPU_DEVICES-unset}\"";
  SECTION("a free port, --cpu-devices; the launcher's own AM_* values are replaced") {
    launcher l(cat({"-n", "3", "--cpu-devices", "2"}, sh(script)),
               {"AM_PROCESS_ID=77", "AM_NUM_PROCESSES=9", "AM_COORDINATOR=example:1", "AM_CPU_DEVICES=5"});
    REQUIRE(l.wait() == 0);
    auto out = lines_of(l.out());
    REQUIRE(out.size() == 3);
    std::sort(out.begin(), out.end());
    const auto first = out[0];
    const auto colon = first.find(':');
    REQUIRE(first.rfind("[0] 127.0.0.1:", 0) == 0);
    const int port = std::atoi(first.c_str() + colon + 1);
    CHECK(port > 0);
    CHECK(port < 65536);
    const auto address = "127.0.0.1:" + std::to_string(port);
    CHECK(out[0] == "[0] " + address + " 3 0 2");
    CHECK(out[1] == "[1] " + address + " 3 1 2");
    CHECK(out[2] == "[2] " + address + " 3 2 2");
    // The launcher names it first, so that `actormesh info --watch` can be pointed at it.
    CHECK(lines_of(l.err()) == std::vector<std::string>{"actormesh launch: coordinator " + address + ", processes 0-2 of 3"});
  }
  SECTION("--coordinator-port; without --cpu-devices the launcher's AM_CPU_DEVICES is kept") {
    const auto [fd, port] = loopback_socket(false);
    close(fd); // free again, for the launcher to check and hand on
    launcher with(cat({"-n", "2", "--coordinator-port", std::to_string(port)}, sh(script)), {"AM_CPU_DEVICES=5"});
    REQUIRE(with.wait() == 0);
    auto out = lines_of(with.out());
    std::sort(out.begin(), out.end());
    const auto address = "127.0.0.1:" + std::to_string(port);
    CHECK(out == std::vector<std::string>{"[0] " + address + " 2 0 5", "[1] " + address + " 2 1 5"});
  }
}

TEST_CASE("launch: a failing process stops a sleeping one within seconds and its status is the launcher's",
          "[launch]") {
  launcher l(cat({"-n", "3"}, sh("if [ $AM_PROCESS_ID = 2 ]; then sleep 0.2; exit 3; fi; exec sleep 60")));
  CHECK(l.wait() == 3);
  CHECK(l.seconds() < 10);
  CHECK(l.out().empty());
  CHECK(launcher_line(l.err()) == "actormesh launch: process 2 exited with status 3; stopped the other 2 processes");
}

TEST_CASE("launch: processes that ignore SIGTERM get SIGKILL after the grace period", "[launch]") {
  // Process 0 fails once the others ignore SIGTERM (each leaves a file in `ready` then).
  char ready[] = "/tmp/am_launch_ready_XXXXXX";
  REQUIRE(mkdtemp(ready) != nullptr);
  const std::string dir(ready);
  launcher l(cat({"-n", "3", "--grace", "0.5"},
                 sh("trap '' TERM; if [ $AM_PROCESS_ID = 0 ]; then while [ ! -e " + dir + "/1 ] || [ ! -e " + dir
                    + "/2 ]; do sleep 0.02; done; exit 4; fi; touch " + dir + "/$AM_PROCESS_ID; exec sleep 60")));
  CHECK(l.wait() == 4);
  std::remove((dir + "/1").c_str());
  std::remove((dir + "/2").c_str());
  rmdir(ready);
  CHECK(l.seconds() >= 0.5);
  CHECK(l.seconds() < 10);
  CHECK(launcher_line(l.err())
        == "actormesh launch: process 0 exited with status 4; stopped the other 2 processes "
           "(2 were still running after 0.5 s and got SIGKILL)");
}

TEST_CASE("launch: a process killed by a signal stops the rest and the launcher exits 128 + the signal", "[launch]") {
  launcher l(cat({"-n", "2"}, sh("if [ $AM_PROCESS_ID = 1 ]; then kill -9 $$; fi; exec sleep 60")));
  CHECK(l.wait() == 128 + SIGKILL);
  CHECK(l.seconds() < 10);
  CHECK(launcher_line(l.err()) == "actormesh launch: process 1 was killed by signal 9 (Killed); stopped the other process");
}

TEST_CASE("launch: SIGTERM and SIGINT to the launcher are forwarded to every child", "[launch]") {
  const auto [sig, name] = GENERATE(std::pair<int, std::string>{SIGTERM, "TERM"}, std::pair<int, std::string>{SIGINT, "INT"});
  INFO("signal " << name);
  launcher l(cat({"-n", "2"}, sh("trap 'echo got " + name + "; exit 0' " + name
                                 + "; echo ready; while :; do sleep 0.1; done")));
  REQUIRE(l.wait_for_lines("ready", 2));
  REQUIRE(kill(l.pid(), sig) == 0);
  CHECK(l.wait() == 128 + sig);
  CHECK(l.seconds() < 10);
  const auto out = l.out();
  CHECK_THAT(out, Catch::Contains("[0] got " + name));
  CHECK_THAT(out, Catch::Contains("[1] got " + name));
  CHECK_THAT(launcher_line(l.err()), Catch::StartsWith("actormesh launch: received signal " + std::to_string(sig))
                                         && Catch::EndsWith("; forwarded it to the 2 running processes"));
}

TEST_CASE("launch: a second signal kills the children at once", "[launch]") {
  launcher l(cat({"-n", "2"}, sh("trap '' TERM INT; echo ready; exec sleep 60")));
  REQUIRE(l.wait_for_lines("ready", 2));
  REQUIRE(kill(l.pid(), SIGTERM) == 0);
  std::this_thread::sleep_for(300ms);
  REQUIRE(kill(l.pid(), SIGINT) == 0);
  CHECK(l.wait() == 128 + SIGTERM);
  CHECK(l.seconds() < 4); // well before the 5 s grace period
  CHECK(launcher_line(l.err())
        == "actormesh launch: received signal 15 (Terminated); forwarded it to the 2 running processes "
           "(2 were still running at a second signal and got SIGKILL)");
}

TEST_CASE("launch: the children die when the launcher is killed with SIGKILL", "[launch]") {
  launcher l(cat({"-n", "2"}, sh("echo pid $$; exec sleep 60")));
  REQUIRE(l.wait_for_lines("pid", 2));
  std::vector<pid_t> children;
  for (const auto& line : lines_of(l.out()))
    children.push_back(static_cast<pid_t>(std::atoi(line.c_str() + line.find("pid ") + 4)));
  REQUIRE(children.size() == 2);
  REQUIRE(kill(l.pid(), SIGKILL) == 0);
  CHECK(l.wait() == 128 + SIGKILL);
  const auto until = steady::now() + 5s;
  while (!(process_gone(children[0]) && process_gone(children[1])) && steady::now() < until)
    std::this_thread::sleep_for(20ms);
  CHECK(process_gone(children[0]));
  CHECK(process_gone(children[1]));
  for (pid_t p : children) // never leave a sleeper behind, whatever happened
    if (!process_gone(p))
      kill(p, SIGKILL);
}

TEST_CASE("launch: --timeout stops everything and exits 124 naming the processes still running", "[launch]") {
  launcher l(cat({"-n", "3", "--timeout", "1.5"}, sh("if [ $AM_PROCESS_ID = 1 ]; then exit 0; fi; exec sleep 60")));
  CHECK(l.wait() == 124);
  CHECK(l.seconds() >= 1.5);
  CHECK(l.seconds() < 10);
  CHECK(launcher_line(l.err())
        == "actormesh launch: timed out after 1.5 s with processes 0 and 2 still running; stopped them");
}

TEST_CASE("launch: a program that cannot be run is reported on one line", "[launch]") {
  SECTION("not found, by path or in PATH: 127") {
    for (const std::string program : {"/nonexistent/am_program", "am_no_such_program_in_path"}) {
      launcher l({"-n", "2", "--", program, "arg"});
      CHECK(l.wait() == 127);
      CHECK(l.out().empty());
      CHECK(without_start_lines(l.err()) == "actormesh launch: cannot run '" + program + "': No such file or directory\n");
    }
  }
  SECTION("not executable: 126") {
    const auto path = temp_path("not_executable");
    chmod(path.c_str(), 0644);
    launcher l({"-n", "2", "--", path});
    CHECK(l.wait() == 126);
    CHECK(without_start_lines(l.err()) == "actormesh launch: cannot run '" + path + "': Permission denied\n");
    std::remove(path.c_str());
  }
}

TEST_CASE("launch: bad arguments exit 2 with one line and start nothing", "[launch]") {
  const auto marker = temp_path("marker");
  std::remove(marker.c_str());
  const auto child = sh("touch " + marker);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{}, "--num-processes is required"},
      {child, "--num-processes is required"},
      {cat({"-n", "0"}, child), "--num-processes: Value 0 not in range 1 to 1024"},
      {cat({"-n", "1025"}, child), "not in range 1 to 1024"},
      {cat({"-n", "x"}, child), "--num-processes"},
      {cat({"-n", "99999999999999999999"}, child), "--num-processes"},
      {{"-n", "2"}, "program is required"},
      {{"-n", "2", "--"}, "program is required"},
      {cat({"-n", "2", "--cpu-devices", "0"}, child), "--cpu-devices"},
      {cat({"-n", "2", "--coordinator-port", "70000"}, child), "--coordinator-port"},
      {cat({"-n", "2", "--grace", "-1"}, child), "--grace: '-1' is not a number of seconds"},
      {cat({"-n", "2", "--grace", "nan"}, child), "--grace: 'nan' is not a number of seconds"},
      {cat({"-n", "2", "--timeout", "0"}, child), "--timeout: '0' is not a number of seconds"},
      {cat({"-n", "2", "--timeout", "inf"}, child), "--timeout"},
      {cat({"-n", "2", "--bogus"}, child), "--bogus"},
  };
  for (const auto& [args, text] : cases)
    check_refused(args, {}, text);
  struct stat st{};
  CHECK(stat(marker.c_str(), &st) != 0); // no child ever ran
}

TEST_CASE("launch: a coordinator port in use is refused before anything starts", "[launch]") {
  const auto [fd, number] = loopback_socket(true);
  const auto port = std::to_string(number);
  launcher l(cat({"-n", "2", "--coordinator-port", port}, sh("echo ran")));
  CHECK(l.wait() == 2);
  close(fd);
  CHECK(l.out().empty());
  CHECK(l.err() == "actormesh launch: --coordinator-port " + port + ": cannot bind 127.0.0.1:" + port
                       + ": Address already in use\n");
}

TEST_CASE("launch: --help prints the usage and exits 0", "[launch]") {
  launcher l({"--help"});
  CHECK(l.wait() == 0);
  CHECK_THAT(l.out(), Catch::Contains("--cpu-devices") && Catch::Contains("--grace") && Catch::Contains("--timeout"));
  CHECK(l.err().empty());
}

TEST_CASE("launch: the children share a new cluster secret per launch, or the one the user gave", "[launch]") {
  const std::string script = "echo \"${AM_CLUSTER_TOKEN-unset} ${AM_CLUSTER_TOKEN_FILE-unset}\"";
  SECTION("a new secret: 64 hex digits, the same in every child, another in the next launch") {
    std::vector<std::string> secrets;
    for (int run = 0; run < 2; ++run) {
      launcher l(cat({"-n", "3"}, sh(script)));
      REQUIRE(l.wait() == 0);
      auto out = lines_of(l.out());
      REQUIRE(out.size() == 3);
      std::set<std::string> seen;
      for (auto& line : out)
        seen.insert(line.substr(line.find(' ') + 1));
      REQUIRE(seen.size() == 1);
      auto secret = seen.begin()->substr(0, seen.begin()->find(' '));
      CHECK(secret.size() == 64);
      CHECK(secret.find_first_not_of("0123456789abcdef") == std::string::npos);
      CHECK(*seen.begin() == secret + " unset");
      secrets.push_back(secret);
    }
    CHECK(secrets[0] != secrets[1]);
  }
  SECTION("the user's secret file is inherited as it is") {
    const auto file = temp_path("token");
    std::ofstream(file) << "users-secret\n";
    launcher l(cat({"-n", "2"}, sh(script)), {"AM_CLUSTER_TOKEN_FILE=" + file});
    REQUIRE(l.wait() == 0);
    auto out = lines_of(l.out());
    std::sort(out.begin(), out.end());
    CHECK(out == std::vector<std::string>{"[0] unset " + file, "[1] unset " + file});
    std::remove(file.c_str());
  }
  SECTION("a secret file that cannot be read starts nothing") {
    launcher l(cat({"-n", "2"}, sh("echo ran")), {"AM_CLUSTER_TOKEN_FILE=/nonexistent/token"});
    CHECK(l.wait() == 2);
    CHECK(l.out().empty());
    CHECK(l.err().find("the cluster token file '/nonexistent/token' (AM_CLUSTER_TOKEN_FILE) cannot be read")
          != std::string::npos);
  }
}

// ---- several nodes, restarts, keep-going, log files ------------------------------------------------

TEST_CASE("launch: --log-dir keeps each process's output unprefixed in attempt_0/<process>/, --ranks-filter "
          "shows only some on the console",
          "[launch]") {
  char made[] = "/tmp/am_launch_logs_XXXXXX";
  REQUIRE(mkdtemp(made) != nullptr);
  const std::string dir(made);
  launcher l(cat({"-n", "3", "--log-dir", dir, "--ranks-filter", "0,2"},
                 sh("echo out $AM_PROCESS_ID; echo err $AM_PROCESS_ID >&2; printf 'no newline'")));
  REQUIRE(l.wait() == 0);
  auto out = lines_of(l.out());
  std::sort(out.begin(), out.end());
  CHECK(out == std::vector<std::string>{"[0] no newline", "[0] out 0", "[2] no newline", "[2] out 2"});
  auto err = lines_of(without_start_lines(l.err()));
  std::sort(err.begin(), err.end());
  CHECK(err == std::vector<std::string>{"[0] err 0", "[2] err 2"});
  for (const std::string p : {"0", "1", "2"}) {
    CHECK(read_file(dir + "/attempt_0/" + p + "/stdout.log") == "out " + p + "\nno newline\n");
    CHECK(read_file(dir + "/attempt_0/" + p + "/stderr.log") == "err " + p + "\n");
  }
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("launch: a --log-dir that cannot be made starts nothing", "[launch]") {
  const auto file = temp_path("not_a_dir"); // a file where the folder should be
  const auto marker = temp_path("marker");
  std::remove(marker.c_str());
  launcher l(cat({"-n", "2", "--log-dir", file + "/logs"}, sh("touch " + marker)));
  CHECK(l.wait() == 2);
  CHECK_THAT(l.err(), Catch::Contains("actormesh launch: --log-dir: cannot create '" + file + "/logs/attempt_0/0'"));
  struct stat st{};
  CHECK(stat(marker.c_str(), &st) != 0);
  std::remove(file.c_str());
}

TEST_CASE("launch: --keep-going lets the others run on after a process is killed and exits 0 when they end well",
          "[launch]") {
  SECTION("process 1 killed, the others end well: 0") {
    launcher l(cat({"-n", "3", "--keep-going"},
                   sh("if [ $AM_PROCESS_ID = 1 ]; then kill -9 $$; fi; sleep 0.5; echo still here")));
    CHECK(l.wait() == 0);
    auto out = lines_of(l.out());
    std::sort(out.begin(), out.end());
    CHECK(out == std::vector<std::string>{"[0] still here", "[2] still here"});
    const auto err = lines_of(without_start_lines(l.err()));
    CHECK(err == std::vector<std::string>{
                   "actormesh launch: process 1 was killed by signal 9 (Killed); the other 2 processes go on (--keep-going)",
                   "actormesh launch: 2 of 3 processes ended well; process 1 failed (--keep-going)"});
  }
  SECTION("every process fails: the first failure's status") {
    launcher l(cat({"-n", "2", "--keep-going"}, sh("if [ $AM_PROCESS_ID = 1 ]; then sleep 0.3; fi; exit 5")));
    CHECK(l.wait() == 5);
    CHECK(lines_of(l.err()).back() == "actormesh launch: 0 of 2 processes ended well: processes 0 and 1 failed (--keep-going)");
  }
}

TEST_CASE("launch: --max-restarts starts the group again, with AM_RESTART_COUNT one higher, until it succeeds",
          "[launch]") {
  SECTION("process 1 fails in the first two attempts; the third ends well") {
    char made[] = "/tmp/am_launch_restarts_XXXXXX";
    REQUIRE(mkdtemp(made) != nullptr);
    const std::string dir(made);
    launcher l(cat({"-n", "2", "--max-restarts", "3", "--log-dir", dir},
                   sh("echo attempt $AM_RESTART_COUNT; if [ $AM_PROCESS_ID = 1 ] && [ $AM_RESTART_COUNT -lt 2 ]; then "
                      "exit 3; fi; exec sleep 0.2")));
    CHECK(l.wait() == 0);
    const auto err = lines_of(l.err());
    INFO(l.err());
    CHECK(std::count_if(err.begin(), err.end(), is_start_line) == 3);
    CHECK(std::count(err.begin(), err.end(),
                     "actormesh launch: process 1 exited with status 3; stopped the other process; restarting the "
                     "group (restart 1 of 3)")
          == 1);
    CHECK(std::count(err.begin(), err.end(),
                     "actormesh launch: process 1 exited with status 3; stopped the other process; restarting the "
                     "group (restart 2 of 3)")
          == 1);
    for (const std::string attempt : {"0", "1", "2"})
      CHECK(read_file(dir + "/attempt_" + attempt + "/1/stdout.log") == "attempt " + attempt + "\n");
    std::system(("rm -rf " + dir).c_str());
  }
  SECTION("a group that always fails gives up after the restarts with the failure's status") {
    launcher l(cat({"-n", "2", "--max-restarts", "2"}, sh("if [ $AM_PROCESS_ID = 0 ]; then exit 4; fi; exec sleep 30")));
    CHECK(l.wait() == 4);
    CHECK(l.seconds() < 15);
    CHECK(lines_of(l.err()).back()
          == "actormesh launch: process 0 exited with status 4; stopped the other process; gave up after 2 restarts");
  }
  SECTION("a signal to the launcher is not a failure to restart after") {
    launcher l(cat({"-n", "2", "--max-restarts", "5"}, sh("trap 'exit 0' TERM; echo ready; while :; do sleep 0.1; done")));
    REQUIRE(l.wait_for_lines("ready", 2));
    REQUIRE(kill(l.pid(), SIGTERM) == 0);
    CHECK(l.wait() == 128 + SIGTERM);
    const auto err = lines_of(l.err());
    CHECK(std::count_if(err.begin(), err.end(), is_start_line) == 1);
  }
}

TEST_CASE("launch: --nnodes --node-rank --rdzv give each node's processes their ids in one cluster", "[launch]") {
  const auto [fd, port] = loopback_socket(false);
  close(fd);
  const auto rdzv = "127.0.0.1:" + std::to_string(port);
  launcher node1(cat({"-n", "2", "--nnodes", "2", "--node-rank", "1", "--rdzv", rdzv},
                     sh("echo \"$AM_COORDINATOR $AM_NUM_PROCESSES $AM_PROCESS_ID\"")),
                 {"AM_CLUSTER_TOKEN=shared-by-both-nodes"});
  REQUIRE(node1.wait() == 0);
  auto out = lines_of(node1.out());
  std::sort(out.begin(), out.end());
  CHECK(out == std::vector<std::string>{"[2] " + rdzv + " 4 2", "[3] " + rdzv + " 4 3"});
  CHECK(lines_of(node1.err())
        == std::vector<std::string>{"actormesh launch: coordinator " + rdzv + ", processes 2-3 of 4 (node 1 of 2)"});
}

TEST_CASE("launch: bad node, restart and filter options exit 2 with one line and start nothing", "[launch]") {
  const auto marker = temp_path("marker");
  std::remove(marker.c_str());
  const auto child = sh("touch " + marker);
  const std::vector<std::string> token{"AM_CLUSTER_TOKEN=shared"};
  const std::vector<std::tuple<std::vector<std::string>, std::vector<std::string>, std::string>> cases{
      {cat({"-n", "2", "--nnodes", "2", "--node-rank", "2", "--rdzv", "h:1"}, child), token,
       "--node-rank 2 is not a node of --nnodes 2 (0..1)"},
      {cat({"-n", "2", "--nnodes", "2"}, child), token, "--nnodes 2 needs --rdzv HOST:PORT"},
      {cat({"-n", "2", "--nnodes", "2", "--rdzv", "h:1"}, child), {},
       "--nnodes 2: the processes of every node need the same cluster secret"},
      {cat({"-n", "2", "--nnodes", "2", "--rdzv", "h:1", "--max-restarts", "1"}, child), token,
       "--max-restarts needs --nnodes 1"},
      {cat({"-n", "2", "--rdzv", "nohost"}, child), {}, "--rdzv: 'nohost' is not HOST:PORT"},
      {cat({"-n", "2", "--rdzv", "h:0"}, child), {}, "--rdzv: 'h:0' is not HOST:PORT"},
      {cat({"-n", "2", "--rdzv", ":80"}, child), {}, "--rdzv: ':80' is not HOST:PORT"},
      {cat({"-n", "2", "--rdzv", "h:1", "--coordinator-port", "5"}, child), {}, "excludes"},
      {cat({"-n", "2", "--keep-going", "--max-restarts", "1"}, child), {}, "excludes"},
      {cat({"-n", "2", "--max-restarts", "-1"}, child), {}, "--max-restarts"},
      {cat({"-n", "2", "--ranks-filter", "2"}, child), {}, "--ranks-filter: '2' is not a process of this launch"},
      {cat({"-n", "4", "--ranks-filter", "0,3-1"}, child), {}, "--ranks-filter: '3-1' is not a process"},
      {cat({"-n", "4", "--ranks-filter", "0,,1"}, child), {}, "--ranks-filter: '' is not a process"},
      {cat({"-n", "4", "--ranks-filter", "-1"}, child), {}, "--ranks-filter"},
  };
  for (const auto& [args, env, text] : cases)
    check_refused(args, env, text);
  struct stat st{};
  CHECK(stat(marker.c_str(), &st) != 0);
}
