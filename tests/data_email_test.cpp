#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

#include "data/email_clean.h"

namespace hwt {
namespace {

TEST(DataEmail, KeepsSubjectDropsHeaders) {
  const std::string mail =
      "From: a@b.c\nReceived: by x\n\tcontinued\nSubject: Hello\n there\nTo: d@e.f\n\nBody  text\n"
      "second line\n";
  EXPECT_EQ(clean_email(mail), "Hello there Body text second line");
  EXPECT_EQ(clean_email("Subject: only headers\nFrom: x"), "only headers");
  EXPECT_EQ(clean_email("From: x\r\nSubject: crlf\r\n\r\nbody\r\n"), "crlf body");
}

TEST(DataEmail, DecodesQuotedPrintable) {
  const std::string mail =
      "Subject: s\nContent-Transfer-Encoding: quoted-printable\n\nfree pri=\nze =3D =41=42 =ZZ\n";
  EXPECT_EQ(clean_email(mail), "s free prize = AB =ZZ");
  // Without the header, "=41" is left alone.
  EXPECT_EQ(clean_email("Subject: s\n\nx=41\n"), "s x=41");
}

TEST(DataEmail, StripsHtml) {
  const std::string mail =
      "Subject: s\nContent-Type: text/html\n\n<html><head><STYLE>p {color: red}</STYLE>"
      "<script type=x>var a = '<b>';</script></head><body><p>Hi&nbsp;there &amp; "
      "&lt;you&gt;&#33;&#x3F;</p><!-- hidden --><br>bye &unknown; 1 < 2</body></html>";
  EXPECT_EQ(clean_email(mail), "s Hi there & <you>!? bye &unknown; 1 < 2");
}

TEST(DataEmail, DropsMimePartHeadersBoundariesAndBase64) {
  const std::string mail =
      "Subject: s\nContent-Type: multipart/alternative;\n\tboundary=\"XYZ\"\n\n--XYZ\n"
      "Content-Type: text/plain;\n\tcharset=us-ascii\nContent-Transfer-Encoding: "
      "quoted-printable\n\nplain =3D part\n--XYZ\nContent-Type: application/octet-stream\n\n"
      "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5\n--XYZ--\n";
  EXPECT_EQ(clean_email(mail), "s plain = part");
}

// What clean_email promises of any bytes: one line of text, words separated by single spaces,
// no whitespace or control character else, no longer than the input, and clean already (as a
// subject line it comes back unchanged).
void expect_clean(const std::string& raw) {
  const std::string out = clean_email(raw);
  const std::string shown = ::testing::PrintToString(raw);
  EXPECT_LE(out.size(), raw.size()) << shown;
  EXPECT_FALSE(out.starts_with(' ') || out.ends_with(' ')) << shown;
  EXPECT_EQ(out.find("  "), std::string::npos) << shown;
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return c == ' ' || (u > 0x20 && u != 0x7F);
  })) << shown;
  EXPECT_EQ(clean_email("Subject: " + out), out) << shown;
}

TEST(DataEmail, AnyBytesGiveOneCleanLine) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  // In a plain body every byte but whitespace and control characters is kept, in order.
  std::string ascii, high;
  for (int i = 0x21; i < 0x7F; ++i) ascii += static_cast<char>(i);
  for (int i = 0x80; i < 256; ++i) high += static_cast<char>(i);
  EXPECT_EQ(clean_email("Subject: s\n\n" + bytes), "s " + ascii + " " + high);
  const std::string html = "Subject: s\nContent-Type: text/html\n\n";
  const std::string qp = "Subject: q\nContent-Transfer-Encoding: quoted-printable\n\n";
  const std::pair<std::string, std::string> cases[] = {
      {bytes, ""},  // no empty line: all header, no subject
      {"", ""},
      {"Subject:", ""},
      {"\n\n", ""},
      {"=", ""},
      {std::string("\0\0\n\n\0", 5), ""},
      {html + "<", "s <"},
      {html + "a<!--", "s a"},
      {html + "&#99999999999;", "s &#99999999999;"},  // too long for an entity: kept
      {html + "a&#9999999;b", "s a b"},               // beyond Unicode: a word break
      {qp + "=4", "q =4"},
      {qp + "a=", "q a"},  // a soft line break
  };
  for (const auto& [raw, want] : cases) {
    EXPECT_EQ(clean_email(raw), want) << ::testing::PrintToString(raw);
    expect_clean(raw);
  }
  expect_clean(bytes);
  // Random mixes of the pieces the cleaner reacts to, and of raw bytes.
  const std::string pieces[] = {"Subject: ",
                                "Content-Type: text/html",
                                "Content-Transfer-Encoding: quoted-printable",
                                "\n",
                                "\r\n",
                                "\n\n",
                                "\n\t",
                                "<",
                                ">",
                                "<!--",
                                "-->",
                                "<style>",
                                "</style",
                                "<html>",
                                "&",
                                "&#",
                                "&amp;",
                                ";",
                                "=",
                                "=3D",
                                "=\n",
                                "--b",
                                " ",
                                "word"};
  uint32_t r = 12345;
  const auto next = [&] { return r = r * 1103515245u + 12345u, (r >> 8) & 0xffff; };
  for (int t = 0; t < 3000; ++t) {
    std::string raw;
    for (uint32_t n = next() % 24; n > 0; --n) {
      const uint32_t k = next() % (std::size(pieces) + 4);
      raw += k < std::size(pieces) ? pieces[k] : std::string(1, static_cast<char>(next() & 0xff));
    }
    expect_clean(raw);
    if (::testing::Test::HasFailure()) break;  // one failing input is enough to read
  }
}

}  // namespace
}  // namespace hwt
