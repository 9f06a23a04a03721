#pragma once
// GET /: a small chat page, HTML, CSS and JavaScript in one string inside the binary (no CDN,
// no build step). It streams from /v1/chat/completions and keeps the conversation in the
// browser's localStorage.
#include <string>

namespace pocket::serve {

const std::string& chat_page_html();

}  // namespace pocket::serve
