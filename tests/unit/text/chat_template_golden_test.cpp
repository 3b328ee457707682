// The official Qwen chat templates rendered against chat_goldens.json (made with Jinja2 3.1.2
// configured as HF apply_chat_template; see chat-templates/PROVENANCE.md).
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "testing.h"
#include "text/chat_template.h"

namespace tandem::text {
namespace {

using nlohmann::ordered_json;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Renders every golden case of `template_name`; returns how many were checked.
int CheckGoldenCases(const std::string& template_name) {
  std::string dir = testing::SharedPath("models/chat-templates/");
  const std::string golden_path = dir + "chat_goldens.json";
  // ordered_json: the contexts keep the golden's key order (tojson renders in that order).
  const auto goldens = testing::LoadGoldenJson<ordered_json>(golden_path);
  auto parsed = ChatTemplate::Parse(ReadText(dir + template_name));
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return 0;
  int checked = 0;
  for (const auto& c : testing::RequireCases(goldens, "cases", golden_path)) {
    if (c["template"] != template_name) continue;
    ordered_json context = {{"messages", c["messages"]},
                            {"tools", c["tools"]},
                            {"documents", nullptr},
                            {"add_generation_prompt", c["add_generation_prompt"]},
                            {"bos_token", ""},
                            {"eos_token", "<|im_end|>"},
                            {"pad_token", "<|endoftext|>"}};
    for (auto it = c["kwargs"].begin(); it != c["kwargs"].end(); ++it) context[it.key()] = *it;
    auto rendered = parsed->Render(context);
    ++checked;
    if (!rendered.ok()) {
      ADD_FAILURE() << template_name << " case " << c["case"] << ": "
                    << rendered.status().ToString();
      continue;
    }
    EXPECT_EQ(rendered.value(), c["rendered"].get<std::string>())
        << template_name << " case " << c["case"];
  }
  return checked;
}

TEST(ChatTemplateGoldenTest, Qwen3RendersEveryGoldenCase) {
  EXPECT_EQ(CheckGoldenCases("Qwen-Qwen3-0.6B.jinja"), 11);
}

TEST(ChatTemplateGoldenTest, Qwen35RendersEveryGoldenCase) {
  EXPECT_EQ(CheckGoldenCases("Qwen3.5-4B.jinja"), 12);
}

TEST(ChatTemplateGoldenTest, EveryShippedQwenTemplateParses) {
  for (const char* name : {"Qwen-Qwen2.5-7B-Instruct.jinja", "Qwen-QwQ-32B.jinja",
                           "Qwen3-Coder.jinja", "Qwen-Qwen3-0.6B.jinja", "Qwen3.5-4B.jinja"}) {
    auto parsed =
        ChatTemplate::Parse(ReadText(testing::SharedPath("models/chat-templates/") + name));
    EXPECT_TRUE(parsed.ok()) << name << ": " << parsed.status().ToString();
  }
}

}  // namespace
}  // namespace tandem::text
