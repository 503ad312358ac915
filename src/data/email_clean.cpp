#include "data/email_clean.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>

#include "data/text_io.h"

namespace hwt {
namespace {

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool istarts_with(std::string_view s, std::string_view prefix_lower) {
  return s.size() >= prefix_lower.size() &&
         std::equal(prefix_lower.begin(), prefix_lower.end(), s.begin(),
                    [](char p, char c) { return lower(c) == p; });
}

// Position of `needle` (lowercase) in `hay` at or after `from`, ignoring ASCII case; or npos.
size_t ifind(std::string_view hay, std::string_view needle, size_t from = 0) {
  for (size_t i = from; i + needle.size() <= hay.size(); ++i)
    if (istarts_with(hay.substr(i), needle)) return i;
  return std::string_view::npos;
}

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// How the text is encoded, from the message's and its MIME parts' headers.
struct Encoding {
  bool quoted_printable = false, html = false;
  void note(std::string_view header_line) {
    quoted_printable |= ifind(header_line, "quoted-printable") != std::string_view::npos;
    html |= ifind(header_line, "text/html") != std::string_view::npos;
  }
};

bool is_base64_line(std::string_view line) {
  if (line.size() < 40) return false;
  return std::all_of(line.begin(), line.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/' || c == '=';
  });
}

// Body lines that carry no text: MIME boundaries and part headers (with their continuation
// lines) and base64-encoded attachments.
std::string drop_mime_lines(std::string_view body, Encoding& enc) {
  std::string out;
  out.reserve(body.size());
  bool in_part_header = false;
  for (std::string_view line : split_lines(body)) {
    const bool continuation = in_part_header && !line.empty() && is_blank(line[0]);
    const bool part_header = istarts_with(line, "content-") && line.find(':') < line.find(' ');
    in_part_header = part_header || continuation;
    if (in_part_header) enc.note(line);
    const bool boundary = line.starts_with("--") && line.find(' ') == std::string_view::npos;
    if (!in_part_header && !boundary && !is_base64_line(line)) {
      out.append(line);
      out += '\n';
    }
  }
  return out;
}

// "=XX" escapes and "=" soft line breaks (lines already end in "\n" only).
std::string decode_quoted_printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '=') {
      out += s[i];
    } else if (s.substr(i + 1).starts_with('\n')) {
      i += 1;
    } else if (i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += '=';
    }
  }
  return out;
}

// Appends the text of the HTML entity at s[i] == '&' and returns its length; 0 (appending
// nothing) when there is no entity there.
size_t append_entity(std::string_view s, size_t i, std::string& out) {
  const size_t semi = s.find(';', i);
  if (semi == std::string_view::npos || semi - i > 10) return 0;
  const std::string_view name = s.substr(i + 1, semi - i - 1);
  static constexpr std::pair<std::string_view, char> kNamed[] = {
      {"nbsp", ' '}, {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
  for (const auto& [n, c] : kNamed) {
    if (name == n) {
      out += c;
      return semi - i + 1;
    }
  }
  if (name.size() < 2 || name[0] != '#') return 0;
  const bool hex = name[1] == 'x' || name[1] == 'X';
  uint32_t code = 0;
  for (char c : name.substr(hex ? 2 : 1)) {
    const int d = hex ? hex_value(c) : (c >= '0' && c <= '9' ? c - '0' : -1);
    if (d < 0 || code > 0x10FFFF) return 0;
    code = code * (hex ? 16 : 10) + static_cast<uint32_t>(d);
  }
  // Printable ASCII stays; anything else becomes a space (word boundaries are what matter).
  out += code >= 32 && code < 127 ? static_cast<char>(code) : ' ';
  return semi - i + 1;
}

std::string strip_html(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  const auto skip_past = [&](std::string_view end_lower, size_t from) {
    const size_t e = ifind(s, end_lower, from);
    i = e == std::string_view::npos ? s.size() : e + end_lower.size();
  };
  while (i < s.size()) {
    const char c = s[i];
    if (c == '<') {
      const std::string_view rest = s.substr(i);
      const auto opens = [&](std::string_view tag) {
        return istarts_with(rest, tag) &&
               (rest.size() == tag.size() ||
                !std::isalnum(static_cast<unsigned char>(rest[tag.size()])));
      };
      if (rest.starts_with("<!--")) {
        skip_past("-->", i + 4);
      } else if (opens("<style") || opens("<script")) {
        skip_past(opens("<style") ? "</style" : "</script", i + 1);
        skip_past(">", i);
      } else if (rest.size() > 1 && (std::isalpha(static_cast<unsigned char>(rest[1])) ||
                                     rest[1] == '/' || rest[1] == '!' || rest[1] == '?')) {
        skip_past(">", i);
      } else {
        out += c;
        ++i;
        continue;
      }
      out += ' ';  // tags such as <br> and <td> separate words
    } else if (const size_t len = c == '&' ? append_entity(s, i, out) : 0; len > 0) {
      i += len;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

// Runs of whitespace and control characters become one space; no space at either end.
void collapse_whitespace(std::string_view s, std::string& out) {
  bool space = !out.empty();
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) {
      space = !out.empty();
    } else {
      if (space) out += ' ';
      space = false;
      out += c;
    }
  }
}

}  // namespace

std::string clean_email(std::string_view raw) {
  // Header block: up to the first empty line. Only the subject (with continuation lines) is
  // kept; the rest is routing noise.
  std::string subject;
  Encoding enc;
  size_t body_start = raw.size();
  bool in_subject = false;
  for (size_t start = 0; start < raw.size();) {
    size_t end = raw.find('\n', start);
    if (end == std::string_view::npos) end = raw.size();
    std::string_view line = raw.substr(start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    start = end + 1;
    if (line.empty()) {
      body_start = std::min(start, raw.size());
      break;
    }
    enc.note(line);
    if (in_subject && is_blank(line[0])) {
      subject.append(line);
    } else {
      in_subject = istarts_with(line, "subject:");
      if (in_subject) subject.append(line.substr(8));
    }
  }
  std::string body = drop_mime_lines(raw.substr(body_start), enc);
  if (enc.quoted_printable) body = decode_quoted_printable(body);
  if (enc.html || ifind(body, "<html") != std::string_view::npos) body = strip_html(body);
  std::string out;
  out.reserve(subject.size() + body.size());
  collapse_whitespace(subject, out);
  collapse_whitespace(body, out);
  return out;
}

}  // namespace hwt
