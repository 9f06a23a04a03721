#pragma once
// Jinja lexer: splits a template into text and the tokens inside {{ }} / {% %}, applying the
// whitespace rules of HF transformers' environment (trim_blocks, lstrip_blocks, `-` / `+`
// modifiers, one trailing newline of the template dropped). Comments vanish here.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pocket::jinja {

struct Token {
    enum class Kind { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, Int, Float, String, Op, Eof };
    Kind kind;
    std::string text;   // decoded string literal, operator spelling, name, digits or raw text
    size_t offset = 0;  // into the normalized source, for error positions
};

// The source as the lexer sees it: newlines normalized to \n and one trailing newline dropped.
std::string normalize_source(std::string_view source);

// Tokenizes a normalized source; throws pocket::Error naming line and column on bad input.
std::vector<Token> tokenize(std::string_view source);

// "line L, column C" (both from 1) of a byte offset into the normalized source.
std::string describe_position(std::string_view source, size_t offset);

}  // namespace pocket::jinja
