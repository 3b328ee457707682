#include "text/chat_template.h"

#include <gtest/gtest.h>

#include <ctime>

#include "testing.h"

namespace tandem::text {
namespace chat_template_test {
namespace {

using nlohmann::json;

std::string RenderOk(const std::string& source, const json& context = json::object()) {
  auto parsed = ChatTemplate::Parse(source);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return "<parse error>";
  auto rendered = parsed->Render(context);
  EXPECT_TRUE(rendered.ok()) << rendered.status().ToString();
  return rendered.ok() ? rendered.value() : "<render error>";
}

Status RenderError(const std::string& source, const json& context = json::object()) {
  auto parsed = ChatTemplate::Parse(source);
  if (!parsed.ok()) return parsed.status();
  auto rendered = parsed->Render(context);
  EXPECT_FALSE(rendered.ok()) << "rendered: " << rendered.value();
  return rendered.ok() ? Status::Ok() : rendered.status();
}

TEST(ChatTemplateTest, TextAndExpressions) {
  EXPECT_EQ(RenderOk("plain text"), "plain text");
  EXPECT_EQ(RenderOk("{{ 'a' + 'b' ~ 1 }}|{{ 2 + 3 * 4 }}|{{ 7 // 2 }}|{{ -7 % 3 }}"),
            "ab1|14|3|2");
  EXPECT_EQ(RenderOk("{{ x.y }}-{{ x['y'] }}-{{ xs[0] }}-{{ xs[-1] }}",
                     {{"x", {{"y", "Y"}}}, {"xs", {1, 2, 3}}}),
            "Y-Y-1-3");
  EXPECT_EQ(RenderOk("{{ none }} {{ true }} {{ [1, 'a'] }} {{ missing }}."),
            "None True [1, 'a'] .");
  EXPECT_EQ(
      RenderOk("{{ 1 == 1.0 }} {{ 'b' in 'abc' }} {{ 3 not in [1, 2] }} {{ 1 < 2 and not 2 > 3 }}"),
      "True True True True");
  EXPECT_EQ(RenderOk("{{ 'yes' if flag else 'no' }}", {{"flag", false}}), "no");
  EXPECT_EQ(RenderOk("{% if '' %}T{% else %}F{% endif %}{% if ' ' %}T{% endif %}"), "FT");
  EXPECT_EQ(RenderOk("{{ xs[1:] }} {{ xs[::-1] }} {{ 'abc'[:2] }}", {{"xs", {1, 2, 3}}}),
            "[2, 3] [3, 2, 1] ab");
}

TEST(ChatTemplateTest, IfElifElse) {
  const std::string t = "{% if n == 1 %}one{% elif n == 2 %}two{% else %}many{% endif %}";
  EXPECT_EQ(RenderOk(t, {{"n", 1}}), "one");
  EXPECT_EQ(RenderOk(t, {{"n", 2}}), "two");
  EXPECT_EQ(RenderOk(t, {{"n", 5}}), "many");
}

TEST(ChatTemplateTest, ForLoopVariables) {
  EXPECT_EQ(RenderOk("{% for x in xs %}{{ loop.index0 }}{{ loop.index }}{{ x }}"
                     "{% if loop.first %}F{% endif %}{% if loop.last %}L{% endif %},{% endfor %}",
                     {{"xs", {"a", "b", "c"}}}),
            "01aF,12b,23cL,");
  EXPECT_EQ(RenderOk("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}",
                     {{"d", {{"a", 1}, {"b", 2}}}}),
            "a=1;b=2;");
  EXPECT_EQ(
      RenderOk("{% for x in xs if x > 1 %}{{ x }}{% else %}empty{% endfor %}", {{"xs", {1, 2, 3}}}),
      "23");
  EXPECT_EQ(RenderOk("{% for x in [] %}{{ x }}{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(RenderOk("{% for x in range(5) %}{% if x == 3 %}{% break %}{% endif %}"
                     "{% if x == 1 %}{% continue %}{% endif %}{{ x }}{% endfor %}"),
            "02");
}

TEST(ChatTemplateTest, SetAndNamespaceScoping) {
  EXPECT_EQ(RenderOk("{% set x = 'v' %}{{ x }}"), "v");
  // A set inside a loop does not leak out; a namespace attribute does.
  EXPECT_EQ(RenderOk("{% set n = 0 %}{% set ns = namespace(n=0) %}{% for i in [1, 2] %}"
                     "{% set n = n + i %}{% set ns.n = ns.n + i %}{% endfor %}{{ n }} {{ ns.n }}"),
            "0 3");
}

TEST(ChatTemplateTest, MacrosRenderWithPositionalKeywordAndDefaultArguments) {
  EXPECT_EQ(RenderOk("{% macro tag(name, body='-', close=true) %}<{{ name }}>{{ body }}"
                     "{% if close %}</{{ name }}>{% endif %}{% endmacro %}"
                     "{{ tag('a') }}|{{ tag('b', 'x', close=false) }}"),
            "<a>-</a>|<b>x");
}

TEST(ChatTemplateTest, WhitespaceControlAndHfBlockTrimming) {
  EXPECT_EQ(RenderOk("a  {{- 'b' -}}  c"), "abc");
  // trim_blocks drops the newline after a block tag; lstrip_blocks the indent before it.
  EXPECT_EQ(RenderOk("{% for x in xs %}\n    {% if x %}\n{{ x }}\n    {% endif %}\n{% endfor %}",
                     {{"xs", {"a", "b"}}}),
            "a\nb\n");
  EXPECT_EQ(RenderOk("x\n  {%- if true %}y{% endif %}"), "xy");
  EXPECT_EQ(RenderOk("{# comment #}\nz"), "z");
}

TEST(ChatTemplateTest, FiltersTestsAndMethods) {
  EXPECT_EQ(RenderOk("{{ '  hi  ' | trim }}|{{ s.strip() }}|{{ 'Ab' | upper }}{{ 'Ab' | lower }}",
                     {{"s", " x "}}),
            "hi|x|ABab");
  EXPECT_EQ(RenderOk("{{ xs | length }} {{ 'abc' | length }}", {{"xs", {1, 2}}}), "2 3");
  json ordered = json::parse(R"({"tool": {"name": "f", "args": [1, 2.5, null, "é"]}})");
  EXPECT_EQ(RenderOk("{{ tool | tojson }}", ordered),
            "{\"args\": [1, 2.5, null, \"é\"], \"name\": \"f\"}");
  EXPECT_EQ(RenderOk("{{ x is defined }} {{ y is defined }} {{ n is none }} {{ n is not none }}",
                     {{"x", 1}, {"n", nullptr}}),
            "True False True False");
  EXPECT_EQ(RenderOk("{{ 'a,b'.split(',') }} {{ 'xhi'.startswith('x') }} {{ 'a\\n'.rstrip() }}"),
            "['a', 'b'] True a");
}

TEST(ChatTemplateTest, TojsonKeepsKeyOrderOfOrderedContext) {
  auto parsed = ChatTemplate::Parse("{{ t | tojson }}");
  ASSERT_TRUE(parsed.ok());
  auto rendered = parsed->Render(nlohmann::ordered_json::parse(R"({"t": {"z": 1, "a": 2}})"));
  ASSERT_TRUE(rendered.ok());
  EXPECT_EQ(rendered.value(), R"({"z": 1, "a": 2})");
}

TEST(ChatTemplateTest, RaiseExceptionIsInvalidArgumentWithTheMessage) {
  Status status = RenderError(
      "{% if messages[0].role != 'user' %}{{ raise_exception('Conversation must start with a "
      "user message') }}{% endif %}",
      {{"messages", {{{"role", "assistant"}, {"content", "x"}}}}});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "Conversation must start with a user message");
}

TEST(ChatTemplateTest, SyntaxErrorNamesLineAndColumn) {
  auto parsed = ChatTemplate::Parse("line one\n{% if x %}\n  {{ x + }}\n{% endif %}");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("line 3, column 10"), std::string::npos)
      << parsed.status().message();
  auto unclosed = ChatTemplate::Parse("{% for x in xs %}{{ x }}");
  ASSERT_FALSE(unclosed.ok());
  EXPECT_NE(unclosed.status().message().find("endfor"), std::string::npos);
}

TEST(ChatTemplateTest, RuntimeErrorNamesLineAndColumn) {
  Status status = RenderError("ok\n{{ 1 + 'a' }}");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("line 2, column 6"), std::string::npos) << status.message();
  status = RenderError("{{ x | nosuchfilter }}", {{"x", 1}});
  EXPECT_NE(status.message().find("unknown filter 'nosuchfilter'"), std::string::npos);
}

TEST(ChatTemplateTest, SimpleChatMlTemplate) {
  const std::string source =
      "{{ bos_token }}{% for message in messages %}"
      "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] | trim + '<|im_end|>\\n' }}"
      "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
  json context = {
      {"messages",
       {{{"role", "system"}, {"content", "Be brief. "}}, {{"role", "user"}, {"content", "Hi"}}}},
      {"add_generation_prompt", true},
      {"bos_token", "<s>"},
      {"eos_token", "</s>"}};
  EXPECT_EQ(RenderOk(source, context),
            "<s><|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n");
}

}  // namespace
}  // namespace chat_template_test
}  // namespace tandem::text

namespace tandem::text {
namespace chat_template_test {
namespace {

TEST(ChatTemplateTest, BlockSetCapturesTheRenderedBody) {
  EXPECT_EQ(
      RenderOk("{% set greeting %}Hi {{ name }}!{% endset %}[{{ greeting }}]", {{"name", "Ann"}}),
      "[Hi Ann!]");
  EXPECT_EQ(RenderOk("{%- set x -%}\n  a{% for i in range(3) %}{{ i }}{% endfor %}\n{%- endset -%}"
                     "{{ x | length }}"),
            "4");
}

TEST(ChatTemplateTest, StrftimeNowFormatsTheLocalDate) {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char year[8];
  std::strftime(year, sizeof(year), "%Y", &local);
  // The year changes only at New Year's midnight; a render straddling it is not worth a retry.
  EXPECT_EQ(RenderOk("{{ strftime_now('%Y') }}"), year);
  EXPECT_EQ(RenderOk("{{ strftime_now('%d %B %Y') | length > 8 }}"), "True");
  EXPECT_FALSE(RenderError("{{ strftime_now(3) }}").ok());
}

}  // namespace
}  // namespace chat_template_test
}  // namespace tandem::text
