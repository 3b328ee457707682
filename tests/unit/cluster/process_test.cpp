// ChildProcess and TailOfFile: exit descriptions, exec failures, stopping a process group,
// no inherited descriptors, and tails of 0, 1 and more lines.
#include "cluster/agent/process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace tandem::cluster::agent {
namespace {

class ProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tandem-process-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string WaitForExit(ChildProcess& p) {
    for (int i = 0; i < 500; ++i) {  // a hang guard of 10 s
      if (auto exit = p.Poll()) return *exit;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "still running";
  }
  std::string dir_;
};

TEST_F(ProcessTest, ExitCodesExecFailuresAndStop) {
  LaunchSpec spec{{"false"}, {"PATH=/usr/bin:/bin"}, dir_ + "/a.log", {}};
  auto p = ChildProcess::Spawn(spec);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(WaitForExit(**p), "exited with code 1");

  spec = {{"/nonexistent/tandem"}, {}, dir_ + "/b.log", {}};
  p = ChildProcess::Spawn(spec);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(WaitForExit(**p), "exited with code 127");
  EXPECT_EQ(TailOfFile(dir_ + "/b.log", 5),
            "tandem agent: cannot execute '/nonexistent/tandem': No such file or directory");

  spec = {{"sleep", "100"}, {"PATH=/usr/bin:/bin"}, dir_ + "/c.log", {}};
  p = ChildProcess::Spawn(spec);
  ASSERT_TRUE(p.ok());
  (*p)->Stop(5);
  EXPECT_EQ((*p)->Poll().value(), "was killed by signal 15 (Terminated)");
}

TEST_F(ProcessTest, TheChildInheritsNoDescriptorsBeyondTheStandardOnes) {
  LaunchSpec spec{{"ls", "/proc/self/fd"}, {"PATH=/usr/bin:/bin"}, dir_ + "/fd.log", {}};
  auto p = ChildProcess::Spawn(spec);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(WaitForExit(**p), "exited with code 0");
  // 0, 1, 2 and the descriptor ls opens to read the folder.
  EXPECT_EQ(TailOfFile(dir_ + "/fd.log", 10), "0\n1\n2\n3");
}

TEST_F(ProcessTest, TailOfFile) {
  {
    std::ofstream out(dir_ + "/t.log");
    out << "a\nb\nc\n\n";
  }
  const std::string path = dir_ + "/t.log";
  EXPECT_EQ(TailOfFile(path, 0), "");
  EXPECT_EQ(TailOfFile(path, -3), "");
  EXPECT_EQ(TailOfFile(path, 1), "c");
  EXPECT_EQ(TailOfFile(path, 2), "b\nc");
  EXPECT_EQ(TailOfFile(path, 9), "a\nb\nc");
  EXPECT_EQ(TailOfFile(dir_ + "/missing.log", 3), "");
}

}  // namespace
}  // namespace tandem::cluster::agent
