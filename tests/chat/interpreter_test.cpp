// The Jinja interpreter through the public API, one feature at a time. Expected strings are
// what Python Jinja2 (trim_blocks, lstrip_blocks, as HF transformers sets it) prints.
#include "pocket/chat_template.hpp"
#include "pocket/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

// Renders `src` with the variables of a JSON object (default: none).
std::string R(const std::string& src, const std::string& vars = "{}") {
    return pocket::ChatTemplate::parse(src).render_json_variables(vars);
}

// The message of the pocket::Error that parsing or rendering throws ("" when none is thrown).
std::string error_of(const std::string& src, const std::string& vars = "{}") {
    try {
        R(src, vars);
    } catch (const pocket::Error& e) {
        return e.what();
    }
    return "";
}

#define EXPECT_ERROR_HAS(src, needle)                                                  \
    do {                                                                               \
        const std::string msg_ = error_of(src);                                        \
        EXPECT_NE(msg_.find(needle), std::string::npos) << "error message: '" << msg_ << "'"; \
    } while (0)

TEST(JinjaWhitespace, TrimBlocksDropsNewlineAfterTag) {
    EXPECT_EQ(R("{% if true %}\n  x\n{% endif %}\n"), "  x\n");
    EXPECT_EQ(R("a{# comment #}\nb"), "ab");
    EXPECT_EQ(R("{{ 'a' }}\nb"), "a\nb");  // not for {{ }}
}

TEST(JinjaWhitespace, LstripBlocksOnlyAtLineStart) {
    EXPECT_EQ(R("  {% if true %}a{% endif %}"), "a");
    EXPECT_EQ(R("x\n    {% if true %}a{% endif %}"), "x\na");
    EXPECT_EQ(R("x  {% if true %}a{% endif %}"), "x  a");    // tag is not first on its line
    EXPECT_EQ(R("  {%+ if true %}a{% endif %}"), "  a");     // `+` turns lstrip off
    EXPECT_EQ(R("  {{ 'v' }}"), "  v");                      // not for {{ }}
}

TEST(JinjaWhitespace, DashModifiersStripAllWhitespace) {
    EXPECT_EQ(R("a  \n {%- if true %}b{% endif %}"), "ab");
    EXPECT_EQ(R("{{ 'a' -}}   \n  b"), "ab");
    EXPECT_EQ(R("a\n\n{{- 'b' -}}\n\nc"), "abc");
    EXPECT_EQ(R("{% for i in [1, 2] -%}\n  {{ i }}\n{%- endfor %}"), "12");
}

TEST(JinjaWhitespace, OneTrailingNewlineDropped) {
    EXPECT_EQ(R("a\n"), "a");
    EXPECT_EQ(R("a\n\n"), "a\n");
    EXPECT_EQ(R("a\r\nb\r\n"), "a\nb");
}

TEST(JinjaSyntax, RawBlockAndComments) {
    EXPECT_EQ(R("{% raw %}{{ x }}{% if %}{% endraw %}"), "{{ x }}{% if %}");
    EXPECT_EQ(R("a{# {{ x }} #}b"), "ab");
}

TEST(JinjaSyntax, DictLiteralInsideOutputTag) {
    EXPECT_EQ(R("{{ {'a': {'b': 1}}['a']['b'] }}"), "1");
}

TEST(JinjaLoops, LoopVariables) {
    EXPECT_EQ(R("{% for x in ['a', 'b', 'c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}"
                "{{ loop.length }}{{ loop.revindex }}{{ loop.revindex0 }},{% endfor %}"),
              "10TrueFalse332,21FalseFalse321,32FalseTrue310,");
    EXPECT_EQ(R("{% for x in [1, 2, 3] %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}"), "-2;1-3;2-;");
    EXPECT_EQ(R("{% for x in [1, 2, 3] %}{{ loop.cycle('a', 'b') }}{% endfor %}"), "aba");
}

TEST(JinjaLoops, ElseFilterAndUnpacking) {
    EXPECT_EQ(R("{% for x in [] %}a{% else %}empty{% endfor %}"), "empty");
    EXPECT_EQ(R("{% for x in nothing %}a{% else %}none{% endfor %}"), "none");
    EXPECT_EQ(R("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}"), "a=1;b=2;");
    EXPECT_EQ(R("{% for k in {'x': 1, 'y': 2} %}{{ k }}{% endfor %}"), "xy");
    EXPECT_EQ(R("{% for x in range(6) if x is even %}{{ x }}{{ loop.length }} {% endfor %}"), "03 23 43 ");
    EXPECT_EQ(R("{% for c in 'hé!' %}[{{ c }}]{% endfor %}"), "[h][é][!]");
}

TEST(JinjaLoops, BreakAndContinue) {
    EXPECT_EQ(R("{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}"
                "{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}"),
              "0134");
    EXPECT_ERROR_HAS("{% break %}", "outside a for loop");
}

TEST(JinjaScopes, SetInLoopDoesNotLeakButNamespaceDoes) {
    EXPECT_EQ(R("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}"), "21");
    EXPECT_EQ(R("{% set ns = namespace(x=1, s='') %}{% for i in [1, 2] %}{% set ns.x = ns.x + i %}"
                "{% set ns.s = ns.s ~ i %}{% endfor %}{{ ns.x }} {{ ns.s }}"),
              "4 12");
    EXPECT_EQ(R("{% set a, b = [1, 2] %}{{ b }}{{ a }}"), "21");
    EXPECT_EQ(R("{% set block %}x{{ 1 + 1 }}{% endset %}[{{ block }}]"), "[x2]");
    EXPECT_EQ(R("{% if true %}{% set y = 'in-if' %}{% endif %}{{ y }}"), "in-if");  // if has no scope
}

TEST(JinjaMacros, ArgumentsDefaultsAndCaller) {
    EXPECT_EQ(R("{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}"
                "{{ greet('Bob') }} {{ greet('Al', greeting='Hi') }} {{ greet(name='Cy') }}"),
              "Hello, Bob! Hi, Al! Hello, Cy!");
    EXPECT_EQ(R("{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}"
                "{% call wrap('b') %}bold{% endcall %}"),
              "<b>bold</b>");
    EXPECT_EQ(R("{% set g = 'global' %}{% macro m() %}{{ g }}{% endmacro %}{{ m() }}"), "global");
    EXPECT_EQ(R("{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1) | int }}{% endif %}{% endmacro %}"
                "{{ fact(5) }}"),
              "120");
}

TEST(JinjaExpressions, LiteralsAndPrinting) {
    EXPECT_EQ(R("{{ 'a\\tb\\n' }}|{{ \"q'\" }}|{{ '\\u00e9\\x41' }}"), "a\tb\n|q'|éA");
    EXPECT_EQ(R("{{ none }} {{ None }} {{ true }} {{ False }} {{ 1.5 }} {{ 2.0 }} {{ -3 }}"), "None None True False 1.5 2.0 -3");
    EXPECT_EQ(R("{{ [1, 'a', none, true, [2.5]] }}"), "[1, 'a', None, True, [2.5]]");
    EXPECT_EQ(R("{{ {'k': 'v', 'n': 1} }}"), "{'k': 'v', 'n': 1}");
    EXPECT_EQ(R("{{ 'ab' 'cd' }}"), "abcd");
}

TEST(JinjaExpressions, Arithmetic) {
    EXPECT_EQ(R("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }}"),
              "3 -4 1 2 3.5 1024 7 9");
    EXPECT_EQ(R("{{ 1 + 2.5 }} {{ 10 - 20 }} {{ 'ab' * 3 }} {{ [0] * 2 }}"), "3.5 -10 ababab [0, 0]");
    EXPECT_EQ(R("{{ 'a' ~ 1 ~ none }} {{ 'a' + 'b' }} {{ [1] + [2] }}"), "a1None ab [1, 2]");
    EXPECT_ERROR_HAS("{{ 'a' + 1 }}", "unsupported operand");
    EXPECT_ERROR_HAS("{{ 1 / 0 }}", "division by zero");
}

TEST(JinjaExpressions, ComparisonsLogicAndConditional) {
    EXPECT_EQ(R("{{ 1 == 1.0 }} {{ 'a' != 'b' }} {{ 2 < 3 }} {{ 'b' >= 'a' }} {{ [1, 2] == [1, 2] }}"),
              "True True True True True");
    EXPECT_EQ(R("{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }}"), "True True True True");
    EXPECT_EQ(R("{{ 0 or 'x' }} {{ 1 and 'y' }} {{ not 0 }} {{ not 1 and 1 }}"), "x y True False");
    EXPECT_EQ(R("{{ 'y' if 1 > 2 else 'n' }}|{{ 'y' if false }}|{{ 'a' if 0 else 'b' if 1 else 'c' }}"), "n||b");
}

TEST(JinjaExpressions, AttributeAndSubscript) {
    const std::string vars = R"({"m": {"role": "user", "content": "hi"}, "l": [10, 20, 30]})";
    EXPECT_EQ(R("{{ m.role }} {{ m['content'] }} {{ l[0] }} {{ l[-1] }} {{ l.1 }}", vars), "user hi 10 30 20");
    EXPECT_EQ(R("[{{ m.missing }}][{{ l[7] }}][{{ m.missing.deeper }}][{{ nothing.attr }}]", vars), "[][][][]");
}

TEST(JinjaExpressions, Slicing) {
    EXPECT_EQ(R("{{ [1, 2, 3, 4, 5][1:3] }} {{ [1, 2, 3][::-1] }} {{ [1, 2, 3, 4, 5][::2] }} {{ [1, 2, 3, 4, 5][-2:0:-1] }}"),
              "[2, 3] [3, 2, 1] [1, 3, 5] [4, 3, 2]");
    EXPECT_EQ(R("{{ 'hello'[-3:] }} {{ 'hello'[:2] }} {{ 'héllo'[1:3] }} {{ 'abc'[5:] }}|{{ [1, 2, 3][-10:10] }}"),
              "llo he él |[1, 2, 3]");
}

TEST(JinjaTests, IsTests) {
    EXPECT_EQ(R("{{ x is defined }}{{ x is undefined }}{{ none is none }}{{ 'a' is string }}{{ {} is mapping }}"
                "{{ [] is mapping }}{{ 3 is number }}{{ 3 is integer }}{{ 3.0 is float }}{{ 3 is odd }}"
                "{{ 6 is divisibleby 3 }}{{ x is not defined }}{{ [] is iterable }}{{ 'a' is iterable }}"
                "{{ true is boolean }}{{ false is false }}{{ 1 is true }}"),
              "FalseTrueTrueTrueTrueFalseTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueFalse");
    EXPECT_EQ(R("{{ 2 is in [1, 2] }}{{ 1 is eq 1 }}{{ 'ab' is lower }}{{ 'Ab' is upper }}"), "TrueTrueTrueFalse");
    EXPECT_ERROR_HAS("{{ 1 is frobnicated }}", "unknown test 'frobnicated'");
}

TEST(JinjaFilters, StringFilters) {
    EXPECT_EQ(R("[{{ '  a b \\n' | trim }}][{{ 'xxaxx' | trim('x') }}][{{ 'abc' | upper }}][{{ 'ABC' | lower }}]"),
              "[a b][a][ABC][abc]");
    EXPECT_EQ(R("{{ 'hello wORLD' | title }}|{{ 'hELLO' | capitalize }}|{{ 'aXbX' | replace('X', '-') }}"),
              "Hello World|Hello|a-b-");
    EXPECT_EQ(R("{{ 'héllo' | length }} {{ [1, 2] | count }} {{ {'a': 1} | length }}"), "5 2 1");
    EXPECT_EQ(R("{{ '<a&b>' | escape }} {{ '<b>' | safe }}"), "&lt;a&amp;b&gt; <b>");
    EXPECT_EQ(R("{{ 'a\\nb' | indent(2) }}|{{ 'a\\nb' | indent(2, true) }}"), "a\n  b|  a\n  b");
}

TEST(JinjaFilters, ConversionsAndDefaults) {
    EXPECT_EQ(R("{{ nothing | default('d') }}{{ '' | default('d') }}{{ '' | default('e', true) }}{{ nothing | d('f') }}"),
              "def");
    EXPECT_EQ(R("{{ '42' | int + 1 }} {{ 'x' | int }} {{ 3.9 | int }} {{ '2.5' | float }} {{ 3 | float }} {{ 12 | string ~ 'a' }}"),
              "43 0 3 2.5 3.0 12a");
    EXPECT_EQ(R("{{ 'abc' | list }} {{ [3, 1, 2] | first }}{{ [3, 1, 2] | last }} {{ [3, 1, 2] | sort }} {{ [1, 1, 2] | unique | list }}"),
              "['a', 'b', 'c'] 32 [1, 2, 3] [1, 2]");
    EXPECT_EQ(R("{{ [1, 2, 3] | join(', ') }}|{{ [1, 2, 3] | sum }}|{{ [4, 9, 2] | max }}|{{ [1, 2] | reverse | list }}"),
              "1, 2, 3|6|9|[2, 1]");
}

TEST(JinjaFilters, ToJson) {
    EXPECT_EQ(R(R"({{ {'a': [1, 2.5, true, none, 'é"\n']} | tojson }})"), R"({"a": [1, 2.5, true, null, "é\"\n"]})");
    EXPECT_EQ(R("{{ {'a': 1, 'b': [1], 'c': {}} | tojson(indent=2) }}"),
              "{\n  \"a\": 1,\n  \"b\": [\n    1\n  ],\n  \"c\": {}\n}");
    EXPECT_EQ(R("{{ t | tojson }}", R"({"t": {"z": 1, "a": "日本"}})"), R"({"z": 1, "a": "日本"})");  // order kept, no \u escapes
}

TEST(JinjaFilters, SelectAndMap) {
    const std::string vars = R"({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u1"},
                                              {"role": "user", "content": "u2"}]})";
    EXPECT_EQ(R("{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | join('|') }}", vars), "u1|u2");
    EXPECT_EQ(R("{{ messages | rejectattr('role', 'eq', 'user') | list | length }}", vars), "1");
    EXPECT_EQ(R("{{ messages | map(attribute='role') | unique | list }}", vars), "['system', 'user']");
    EXPECT_EQ(R("{{ ['a', 'B'] | map('upper') | join }} {{ [1, 2, 3, 4] | select('odd') | list }}"), "AB [1, 3]");
    EXPECT_EQ(R("{{ [{'n': 0}, {'n': 2}] | selectattr('n') | list }}"), "[{'n': 2}]");
}

TEST(JinjaMethods, StringMethods) {
    EXPECT_EQ(R("[{{ '  x  '.strip() }}][{{ '\\n\\n x\\n'.lstrip('\\n') }}][{{ 'x\\n\\n'.rstrip() }}][{{ 'a,b,,c'.split(',') }}]"),
              "[x][ x\n][x][['a', 'b', '', 'c']]");
    EXPECT_EQ(R("{{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }}"),
              "['a', 'b'] ['a', 'b c'] True True");
    EXPECT_EQ(R("{{ '{} and {}'.format(1, 'a') }} {{ '{0}{0}'.format('z') }} {{ 'Hi'.upper() }}{{ 'Hi'.lower() }} {{ 'a-a'.replace('a', 'b') }}"),
              "1 and a zz HIhi b-b");
    EXPECT_EQ(R("{{ 'hello world'.title() }} {{ 'abcabc'.find('c') }} {{ ', '.join(['x', 'y']) }}"), "Hello World 2 x, y");
}

TEST(JinjaMethods, DictAndListMethods) {
    EXPECT_EQ(R("{% set d = {'a': 1, 'b': 2} %}{{ d.get('a') }}{{ d.get('z', 'no') }}{{ d.get('z') }}"
                "{{ d.keys() | list }}{{ d.values() | list }}"),
              "1noNone['a', 'b'][1, 2]");
    EXPECT_EQ(R("{% set l = [] %}{% do l.append(1) %}{% set _ = l.append(2) %}{{ l }} {{ l | length }}"), "[1, 2] 2");
}

TEST(JinjaGlobals, RangeNamespaceRaise) {
    EXPECT_EQ(R("{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ range(3, 0, -1) | list }}"), "[0, 1, 2] [1, 3, 5] [3, 2, 1]");
    EXPECT_ERROR_HAS("{{ raise_exception('Only user and assistant roles are supported!') }}",
                     "Only user and assistant roles are supported!");
    EXPECT_EQ(R("{{ strftime_now('%Y') | length }}"), "4");
    EXPECT_ERROR_HAS("{{ undefined_function(1) }}", "'undefined_function' is undefined");
}

TEST(JinjaErrors, SyntaxErrorsNamePosition) {
    EXPECT_ERROR_HAS("{{ 1 + }}", "line 1, column 8");
    EXPECT_ERROR_HAS("a\n{% if %}", "line 2, column 7");
    EXPECT_ERROR_HAS("{% if true %}x", "unexpected end of template");
    EXPECT_ERROR_HAS("{% for x in y %}{% endif %}", "unexpected 'endif'");
    EXPECT_ERROR_HAS("{% frobnicate %}", "unknown or unsupported tag 'frobnicate'");
    EXPECT_ERROR_HAS("{{ 'unterminated }}", "unterminated string");
    EXPECT_ERROR_HAS("{{ x ", "unterminated");
    EXPECT_ERROR_HAS("{{ 1 $ 2 }}", "unexpected character '$'");
    EXPECT_THROW(pocket::ChatTemplate::parse("{% endfor %}"), pocket::Error);
}

TEST(JinjaErrors, RuntimeErrorsNamePosition) {
    EXPECT_ERROR_HAS("line one\n{{ 1 + 'a' }}", "line 2");
    EXPECT_ERROR_HAS("{{ 'x' | nosuchfilter }}", "unknown filter 'nosuchfilter'");
}

TEST(JinjaLimits, DeepNestingIsAnErrorNotACrash) {
    const std::string deep_expr = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
    EXPECT_ERROR_HAS(deep_expr, "nested too deeply");
    std::string deep_blocks;
    for (int i = 0; i < 5000; ++i) deep_blocks += "{% if true %}";
    EXPECT_ERROR_HAS(deep_blocks, "nested too deeply");
    EXPECT_ERROR_HAS("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "recursion");
    EXPECT_ERROR_HAS("{{ " + std::string(5000, '-') + "1 }}", "nested too deeply");
    // A list that contains itself prints, serializes and compares as an error, not a crash.
    EXPECT_ERROR_HAS("{% set l = [] %}{% do l.append(l) %}{% do l.append(l) %}{{ l }}", "nested too deeply");
    EXPECT_ERROR_HAS("{% set l = [] %}{% do l.append(l) %}{{ l | tojson }}", "nested too deeply");
    EXPECT_ERROR_HAS("{% set l = [] %}{% do l.append(l) %}{{ l == l }}", "nested too deeply");
    // Rendering ends by breaking such cycles, so the lists are freed (LeakSanitizer checks).
    EXPECT_EQ(R("{% set a = [] %}{% set b = [a] %}{% do a.append(b) %}{% set d = {} %}{% do d.update({'d': d}) %}ok"), "ok");
}

TEST(JinjaMacros, MacroOutlivingItsLoopIsAnError) {
    EXPECT_ERROR_HAS("{% set ns = namespace() %}{% for i in [1] %}{% macro m() %}{{ i }}{% endmacro %}"
                     "{% set ns.m = m %}{% endfor %}{{ ns.m() }}",
                     "after the block that defined it");
    EXPECT_EQ(R("{% for i in [1, 2] %}{% macro m() %}{{ i }}{% endmacro %}{{ m() }}{% endfor %}"), "12");
}

TEST(JinjaLimits, RunawayLoopsStop) {  // a hang would trip ctest's timeout
    EXPECT_ERROR_HAS("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "step limit");
    EXPECT_ERROR_HAS("{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}", "too large");
    EXPECT_ERROR_HAS("{{ range(1000000000) | length }}", "range too large");
    EXPECT_ERROR_HAS("{% set ns = namespace(s='xx') %}{% for i in range(100) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
                     "too long");
}

TEST(JinjaApi, BosEosDefinedOnlyWhenGiven) {
    const auto t = pocket::ChatTemplate::parse("{{ bos_token is defined }}{{ eos_token is defined }}{{ messages | length }}{{ add_generation_prompt }}");
    std::vector<pocket::ChatMessage> msgs{{"user", "hi"}};
    EXPECT_EQ(t.render(msgs, true), "FalseFalse1True");
    EXPECT_EQ(t.render(msgs, false, "<s>", "</s>"), "TrueTrue1False");
    EXPECT_EQ(pocket::render_chat_json(R"({"messages": [], "bos_token": null})", t), "FalseFalse0True");
    EXPECT_EQ(pocket::render_chat_json(R"({"messages": [], "add_generation_prompt": false, "eos_token": "e"})", t),
              "FalseTrue0False");
    EXPECT_THROW(pocket::render_chat_json("{\"messages\": 3}", t), pocket::Error);
    EXPECT_THROW(pocket::render_chat_json("not json", t), pocket::Error);
}

TEST(JinjaApi, RenderChatJsonPassesExtraKeys) {
    const auto t = pocket::ChatTemplate::parse(
        "{% for m in messages %}{{ m.role }}{% if m.tool_calls %}:{{ m.tool_calls[0].function.name }}{% endif %} {% endfor %}"
        "{{ tools | length }}{{ enable_thinking }}");
    EXPECT_EQ(pocket::render_chat_json(R"({"messages": [{"role": "user", "content": "x"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]}],
        "tools": [{"name": "f"}], "enable_thinking": false})", t),
              "user assistant:f 1False");
}

}  // namespace
