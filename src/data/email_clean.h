// Plain text of a raw e-mail for classification.
#pragma once

#include <string>
#include <string_view>

namespace hwt {

// The Subject line's text, then the body: MIME part headers, boundaries and base64 lines
// dropped, quoted-printable decoded (when the message uses it), HTML reduced to its text
// (without <style>/<script>, common entities decoded), whitespace collapsed to single spaces.
// Total on any bytes: the result never fails, at worst it keeps some noise.
std::string clean_email(std::string_view raw);

}  // namespace hwt
