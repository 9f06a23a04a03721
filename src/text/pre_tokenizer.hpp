#pragma once
// Splits text into the words that byte-level BPE merges within. The regexes run on PCRE2 with
// Unicode properties (PCRE2_UTF | PCRE2_UCP); each regex splits every piece left by the one
// before it, and the text between two matches stays a piece of its own, as in llama.cpp.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pocket {

class PreTokenizer {
public:
    explicit PreTokenizer(const std::vector<std::string>& patterns);
    PreTokenizer(PreTokenizer&&) noexcept;
    PreTokenizer& operator=(PreTokenizer&&) noexcept;
    ~PreTokenizer();

    // The words of `text`, in order, as UTF-8. Invalid input bytes come back as U+FFFD.
    std::vector<std::string> split(std::string_view text) const;

private:
    struct Pattern;
    std::vector<std::unique_ptr<Pattern>> patterns_;
};

}  // namespace pocket
