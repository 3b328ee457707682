// ReadRegularFile / OpenRegularFile / CheckRegularFile: model and config files are read only when
// they are regular files; a FIFO is refused at once instead of blocking start-up in open(2).
#include "core/regular_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tandem {
namespace {

std::string TempPath(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("tandem_regular_file_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

TEST(RegularFileTest, ReadsTheWholeOfARegularFile) {
  const std::string path = TempPath("config.json");
  const std::string content(200000, 'x');  // more than one read(2) buffer
  std::ofstream(path, std::ios::binary) << content;
  const auto text = ReadRegularFile(path);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(text.value(), content);
  EXPECT_TRUE(CheckRegularFile(path).ok());
}

TEST(RegularFileTest, FifoIsRefusedAtOnceNamingThePath) {
  const std::string path = TempPath("fifo.json");
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  // No writer ever opens it: a blocking open(2) would never return.
  const auto text = ReadRegularFile(path);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(text.status().message(), "'" + path + "' is not a regular file (a FIFO)");
  EXPECT_EQ(CheckRegularFile(path).message(), text.status().message());
  EXPECT_FALSE(OpenRegularFile(path).ok());
  ::unlink(path.c_str());
}

TEST(RegularFileTest, DirectoryAndDeviceAreRefusedNamingWhatTheyAre) {
  const std::string dir = TempPath("a_folder");
  std::filesystem::create_directories(dir);
  EXPECT_EQ(ReadRegularFile(dir).status().message(),
            "'" + dir + "' is not a regular file (a directory)");
  EXPECT_EQ(ReadRegularFile("/dev/null").status().message(),
            "'/dev/null' is not a regular file (a character device)");
}

TEST(RegularFileTest, MissingFileIsNotFound) {
  const auto text = ReadRegularFile(TempPath("absent.json"));
  EXPECT_EQ(text.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(CheckRegularFile(TempPath("absent.json")).code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tandem
