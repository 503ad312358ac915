#include <gtest/gtest.h>

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

TEST(DataEmail, AnyBytesAreSafe) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  for (const std::string& s : std::vector<std::string>{
           bytes, "Subject:", "\n\n", "Subject: x\nContent-Type: text/html\n\n<", "=", "<!--",
           "Subject: q\nContent-Transfer-Encoding: quoted-printable\n\n=4", "&#99999999999;",
           std::string("\0\0\n\n\0", 5)})
    EXPECT_NO_THROW((void)clean_email(s));
  EXPECT_EQ(clean_email(""), "");
}

}  // namespace
}  // namespace hwt
