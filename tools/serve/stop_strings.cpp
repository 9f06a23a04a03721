#include "stop_strings.hpp"

#include <algorithm>

namespace pocket::serve {

std::string StopMatcher::push(const std::string& piece, bool& stopped) {
    stopped = false;
    // A match can only end inside the new piece: search from where the longest stop string
    // could have started.
    size_t longest = 0;
    for (const auto& s : stops_) longest = std::max(longest, s.size());
    const size_t from = text_.size() >= longest ? text_.size() - longest + 1 : 0;
    text_ += piece;
    size_t cut = std::string::npos;
    for (const auto& s : stops_)
        if (!s.empty())
            if (const size_t at = text_.find(s, from); at != std::string::npos) cut = std::min(cut, at);
    if (cut != std::string::npos) {
        text_.resize(std::max(cut, sent_));
        stopped = true;
        return flush();
    }
    // Hold back the longest tail that is the start of some stop string. Stop strings are
    // valid UTF-8, so the tail starts on a character boundary.
    size_t hold = 0;
    for (const auto& s : stops_)
        for (size_t n = std::min(s.size() - (s.empty() ? 0 : 1), text_.size()); n > hold; --n)
            if (text_.compare(text_.size() - n, n, s, 0, n) == 0) {
                hold = n;
                break;
            }
    const size_t end = std::max(sent_, text_.size() - hold);
    std::string out = text_.substr(sent_, end - sent_);
    sent_ = end;
    return out;
}

std::string StopMatcher::flush() {
    std::string out = text_.substr(sent_);
    sent_ = text_.size();
    return out;
}

}  // namespace pocket::serve
