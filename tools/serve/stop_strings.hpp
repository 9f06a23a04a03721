#pragma once
// The `stop` strings of a request. Text is released to the client only once it can no longer
// be the start of a stop string (so a stream never shows half of one), and generation ends at
// the first complete match, which is cut from the text, as OpenAI and llama-server do.
#include <string>
#include <vector>

namespace pocket::serve {

class StopMatcher {
public:
    explicit StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}

    // Appends generated text. Returns the text now safe to send; sets `stopped` when a stop
    // string is complete (the text before it is returned, the rest is dropped).
    std::string push(const std::string& piece, bool& stopped);
    // At the end of generation: whatever was held back.
    std::string flush();
    const std::string& text() const { return text_; }  // everything released so far, and held back

private:
    std::vector<std::string> stops_;
    std::string text_;
    size_t sent_ = 0;
};

}  // namespace pocket::serve
