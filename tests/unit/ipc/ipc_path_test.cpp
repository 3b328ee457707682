// IpcDirectory / CheckIpcDirectory / MakeIpcEndpoint: $VLLM_RPC_BASE_PATH, then $TMPDIR, then
// /tmp; an unusable directory refused naming the variable that chose it.
#include "ipc/ipc_path.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace tandem::ipc {
namespace {

class IpcPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("VLLM_RPC_BASE_PATH");
    unsetenv("TMPDIR");
    scratch_ = std::filesystem::temp_directory_path() /
               ("tandem-ipc-path-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(scratch_);
  }
  void TearDown() override {
    unsetenv("VLLM_RPC_BASE_PATH");
    unsetenv("TMPDIR");
    std::filesystem::remove_all(scratch_);
  }
  std::filesystem::path scratch_;
};

TEST_F(IpcPathTest, DefaultIsTmp) {
  EXPECT_EQ(IpcDirectory(), "/tmp");
  EXPECT_TRUE(CheckIpcDirectory().ok());
  EXPECT_EQ(MakeIpcEndpoint("engine0-input"),
            "ipc:///tmp/tandem-" + std::to_string(getpid()) + "-engine0-input");
}

TEST_F(IpcPathTest, VllmRpcBasePathWinsOverTmpdirAndEmptyValuesAreSkipped) {
  setenv("TMPDIR", "/var/tmp", 1);
  EXPECT_EQ(IpcDirectory(), "/var/tmp");
  setenv("VLLM_RPC_BASE_PATH", scratch_.c_str(), 1);
  EXPECT_EQ(IpcDirectory(), scratch_.string());
  setenv("VLLM_RPC_BASE_PATH", "", 1);
  EXPECT_EQ(IpcDirectory(), "/var/tmp");
  setenv("TMPDIR", "", 1);
  EXPECT_EQ(IpcDirectory(), "/tmp");
}

TEST_F(IpcPathTest, TrailingSlashesAreDroppedButTheRootStays) {
  setenv("TMPDIR", (scratch_.string() + "//").c_str(), 1);
  EXPECT_EQ(IpcDirectory(), scratch_.string());
  EXPECT_EQ(MakeIpcEndpoint("x"),
            "ipc://" + scratch_.string() + "/tandem-" + std::to_string(getpid()) + "-x");
  setenv("TMPDIR", "///", 1);
  EXPECT_EQ(IpcDirectory(), "/");
  EXPECT_EQ(MakeIpcEndpoint("x"), "ipc:///tandem-" + std::to_string(getpid()) + "-x");
}

TEST_F(IpcPathTest, MissingFileAndTooLongDirectoriesAreRefusedByName) {
  setenv("TMPDIR", (scratch_ / "missing").c_str(), 1);
  Status st = CheckIpcDirectory();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "the ipc socket directory (TMPDIR=" + (scratch_ / "missing").string() +
                              ") does not exist");

  const std::filesystem::path file = scratch_ / "file";
  std::ofstream(file).put('x');
  setenv("VLLM_RPC_BASE_PATH", file.c_str(), 1);
  st = CheckIpcDirectory();
  EXPECT_EQ(st.message(), "the ipc socket directory (VLLM_RPC_BASE_PATH=" + file.string() +
                              ") is not a directory");

  // sun_path holds 108 bytes: 107 characters and the NUL; "/tandem-" (8), a pid (up to 10
  // digits), "-" and a name of up to 32 leave 56 for the directory.
  const std::filesystem::path longest = "/" + std::string(55, 'd');
  const std::filesystem::path too_long = "/" + std::string(56, 'd');
  setenv("VLLM_RPC_BASE_PATH", too_long.c_str(), 1);
  st = CheckIpcDirectory();
  EXPECT_EQ(st.message(), "the ipc socket directory (VLLM_RPC_BASE_PATH=" + too_long.string() +
                              ") is 57 bytes long; a Unix socket path allows a directory of at "
                              "most 56 bytes here: choose a shorter one");
  setenv("VLLM_RPC_BASE_PATH", longest.c_str(), 1);
  EXPECT_NE(CheckIpcDirectory().message().find("does not exist"), std::string::npos)
      << "56 bytes pass the length check";
}

TEST_F(IpcPathTest, AnUnwritableDirectoryIsRefused) {
  if (geteuid() == 0) {
    GTEST_SKIP() << "root may write anywhere";
  }
  std::filesystem::permissions(
      scratch_, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  setenv("TMPDIR", scratch_.c_str(), 1);
  EXPECT_EQ(CheckIpcDirectory().message(), "the ipc socket directory (TMPDIR=" + scratch_.string() +
                                               ") is not writable by this user");
  std::filesystem::permissions(scratch_, std::filesystem::perms::owner_all);
}

}  // namespace
}  // namespace tandem::ipc
